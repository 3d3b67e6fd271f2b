// The memory store's operator queries for the console, on a real SQLite file: approval counts at 10,000
// pending, the keyset page list with its title/path filter, versions, edges and a session across credentials.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cpuMsOf } from "../../../test/cpu-time.js";
import { tempDir } from "../../../test/helpers.js";
import { preparePageWrite } from "./page-write.js";
import { type ApprovalRecord, type MemoryStore, openMemoryStore } from "./store.js";

function approval(index: number, status: ApprovalRecord["status"]): ApprovalRecord {
  return {
    id: `apr_${String(index).padStart(6, "0")}`,
    created_at: new Date(Date.parse("2026-01-01T00:00:00Z") + index).toISOString(),
    expires_at: "2030-01-01T00:00:00.000Z",
    status,
    tool: "memory_write_page",
    action: "write_page",
    scope: "_global",
    path: `notes/${index}`,
    requester: `cli_${index % 100}`,
    session_id: null,
    summary: "a change",
    diff: "d".repeat(2_000),
    payload: { body: "b".repeat(2_000) },
    base_version: 0,
    decided_by: null,
    decided_at: null,
    reason: null,
  };
}

const write = (scope: string, path: string, body: string, at: string, store: MemoryStore) =>
  store.writePage(preparePageWrite({ scope, path, body, author: "cli_a" }), at);

describe("memory store: console queries", () => {
  let cleanup: () => Promise<void>;
  let store: MemoryStore;
  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    store = await openMemoryStore(`${temp.dir}/memory.sqlite`);
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("counts approvals by status in one query, fast with 10,000 pending", async () => {
    expect(await store.approvalCounts()).toEqual({
      pending: 0,
      applied: 0,
      rejected: 0,
      expired: 0,
      conflict: 0,
    });
    for (let index = 0; index < 10_000; index += 1) await store.createApproval(approval(index, "pending"));
    for (let index = 10_000; index < 10_300; index += 1)
      await store.createApproval(approval(index, "rejected"));
    await store.createApproval(approval(20_000, "conflict"));
    // CPU time (SQLite runs in this process), not the wall clock of a busy host: measured about 1 ms; one
    // GROUP BY, not every request's 4 KB of diff and payload read to count them.
    const { ms, value: counts } = await cpuMsOf(() => store.approvalCounts());
    console.info(`approval counts with 10,301 requests: ${ms.toFixed(2)} ms CPU`);
    expect(counts).toEqual({ pending: 10_000, applied: 0, rejected: 300, expired: 0, conflict: 1 });
    expect(ms).toBeLessThan(50);
  }, 60_000);

  it("pages the page list newest first with a keyset cursor, filtered by title or path", async () => {
    for (let index = 0; index < 5; index += 1)
      await write(
        "_global",
        `notes/n${index}`,
        `# Note ${index}`,
        `2026-01-0${index + 1}T00:00:00.000Z`,
        store,
      );
    await write("git:acme/api", "runbooks/percent", "# 100%_done", "2026-02-01T00:00:00.000Z", store);
    const first = await store.listPages({ limit: 2 });
    expect(first.pages.map((page) => page.path)).toEqual(["runbooks/percent", "notes/n4"]);
    const second = await store.listPages({ limit: 2, cursor: first.next_cursor as string });
    expect(second.pages.map((page) => page.path)).toEqual(["notes/n3", "notes/n2"]);
    const last = await store.listPages({ limit: 10, cursor: second.next_cursor as string });
    expect(last).toMatchObject({ next_cursor: null });
    expect(last.pages.map((page) => page.path)).toEqual(["notes/n1", "notes/n0"]);
    expect((await store.listPages({ limit: 10, scope: "_global" })).pages).toHaveLength(5);
    expect((await store.listPages({ limit: 10, q: "note 3" })).pages.map((page) => page.path)).toEqual([
      "notes/n3",
    ]);
    // LIKE wildcards in the text are literal.
    expect((await store.listPages({ limit: 10, q: "%_" })).pages.map((page) => page.path)).toEqual([
      "runbooks/percent",
    ]);
    await expect(store.listPages({ limit: 1, cursor: "bogus" })).rejects.toThrow(/invalid cursor/);
  });

  it("lists a page's versions newest first and the edges around it", async () => {
    await write("_global", "a", "# A one\n\n[[b]]", "2026-01-01T00:00:00.000Z", store);
    await write("_global", "a", "# A two\n\n[[b]] [[c]]", "2026-01-02T00:00:00.000Z", store);
    await write("_global", "b", "# B", "2026-01-03T00:00:00.000Z", store);
    expect((await store.pageVersions("_global", "a")).map((v) => [v.version, v.title, v.deleted])).toEqual([
      [2, "A two", false],
      [1, "A one", false],
    ]);
    expect((await store.edgesAround(["_global"], ["b"])).map((edge) => [edge.from, edge.to])).toEqual([
      ["a", "b"],
    ]);
    expect((await store.edgesAround(["_global"], ["a"])).map((edge) => edge.to)).toEqual(["b", "c"]);
    expect((await store.edgesAround(["_global"], ["a"], 1)).map((edge) => edge.to)).toEqual(["b"]);
  });

  it("answers a session's events from every credential, honouring as_of", async () => {
    const base = { session_id: "s1", project: "p", valid_to: null, data: {} };
    await store.addEpisode({
      ...base,
      kind: "session_start",
      recorded_at: "2026-01-01T00:00:00.000Z",
      valid_from: null,
      credential_id: "cli_a",
    });
    await store.addEpisode({
      ...base,
      kind: "tool_used",
      recorded_at: "2026-01-01T00:01:00.000Z",
      valid_from: null,
      credential_id: "cli_b",
    });
    await store.addEpisode({
      ...base,
      session_id: "s2",
      kind: "tool_used",
      recorded_at: "2026-01-01T00:01:00.000Z",
      valid_from: null,
      credential_id: "cli_a",
    });
    const all = await store.sessionEpisodes({
      session_id: "s1",
      as_of: "2026-01-02T00:00:00.000Z",
      limit: 10,
    });
    expect(all.map((event) => [event.kind, event.credential_id])).toEqual([
      ["tool_used", "cli_b"],
      ["session_start", "cli_a"],
    ]);
    const early = await store.sessionEpisodes({
      session_id: "s1",
      as_of: "2026-01-01T00:00:30.000Z",
      limit: 10,
    });
    expect(early.map((event) => event.kind)).toEqual(["session_start"]);
  });
});
