// The memory store on a real SQLite file: a schema-1 database gains random event ids and keeps each event
// with its recording credential; the pending cap and the approval list cursor hold at the store.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { preparePageWrite } from "./page-write.js";
import { type ApprovalRecord, MAX_NEIGHBOURS, type MemoryStore, openMemoryStore } from "./store.js";

// The episodes table and meta row exactly as the first release created them.
const SCHEMA_1 = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta (key, value) VALUES ('schema', '1'), ('generation', '0');
CREATE TABLE episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, project TEXT NOT NULL, kind TEXT NOT NULL,
  recorded_at TEXT NOT NULL, valid_from TEXT, valid_to TEXT, data TEXT NOT NULL, credential_id TEXT NOT NULL
);
INSERT INTO episodes (session_id, project, kind, recorded_at, data, credential_id)
  VALUES ('s1', 'p', 'tool_used', '2026-01-01T00:00:00.000Z', '{"old":1}', 'cli_alice'),
         ('s1', 'p', 'session_end', '2026-01-01T00:00:01.000Z', '{"old":2}', 'cli_alice');
`;

const AS_OF = "2030-01-01T00:00:00.000Z";

function approval(id: string, requester: string, created_at: string): ApprovalRecord {
  return {
    id,
    created_at,
    expires_at: "2030-01-01T00:00:00.000Z",
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "_global",
    path: `notes/${id}`,
    requester,
    session_id: null,
    summary: "s".repeat(1000),
    diff: "d".repeat(10_000),
    payload: { body: "b".repeat(10_000) },
    base_version: 0,
    decided_by: null,
    decided_at: null,
    reason: null,
  };
}

describe("memory store", () => {
  let dir: string;
  let store: MemoryStore | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-memory-"));
  });
  afterEach(async () => {
    store?.close();
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("migrates a schema-1 database: old events get random ids and stay with their credential", async () => {
    const file = path.join(dir, "memory.sqlite");
    const old = new Database(file);
    old.exec(SCHEMA_1);
    old.close();

    store = openMemoryStore(file);
    const mine = await store.episodes({
      credential_id: "cli_alice",
      session_id: "s1",
      as_of: AS_OF,
      limit: 10,
    });
    expect(mine.map((event) => event.kind)).toEqual(["session_end", "tool_used"]);
    for (const event of mine) expect(event.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(await store.episodes({ credential_id: "cli_bob", project: "p", as_of: AS_OF, limit: 10 })).toEqual(
      [],
    );
    const first = mine[1]?.id as string;
    expect((await store.getEpisode(first, "cli_alice"))?.data).toEqual({ old: 1 });
    expect(await store.getEpisode(first, "cli_bob")).toBeUndefined();

    // New events come after old ones, and reopening keeps every id.
    const fresh = await store.addEpisode({
      session_id: "s1",
      project: "p",
      kind: "prompt_submitted",
      recorded_at: "2026-01-01T00:00:01.000Z",
      valid_from: null,
      valid_to: null,
      data: {},
      credential_id: "cli_alice",
    });
    store.close();
    store = openMemoryStore(file);
    const again = await store.episodes({
      credential_id: "cli_alice",
      session_id: "s1",
      as_of: AS_OF,
      limit: 10,
    });
    expect(again.map((event) => event.id)).toEqual([fresh, ...mine.map((event) => event.id)]);
    const meta = new Database(file, { readonly: true });
    expect(meta.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({ value: "2" });
    meta.close();
  });

  it("refuses a request past the requester's pending cap, counting only unexpired pending ones", async () => {
    store = openMemoryStore(path.join(dir, "memory.sqlite"));
    const limits = { maxPendingPerRequester: 2 };
    expect(await store.createApproval(approval("apr_1", "cli_a", "2026-01-01T00:00:01.000Z"), limits)).toBe(
      "created",
    );
    expect(await store.createApproval(approval("apr_2", "cli_a", "2026-01-01T00:00:02.000Z"), limits)).toBe(
      "created",
    );
    expect(await store.createApproval(approval("apr_3", "cli_a", "2026-01-01T00:00:03.000Z"), limits)).toBe(
      "too_many_pending",
    );
    expect(await store.createApproval(approval("apr_4", "cli_b", "2026-01-01T00:00:04.000Z"), limits)).toBe(
      "created",
    );
    expect(await store.getApproval("apr_3")).toBeUndefined();
  });

  it("lists summaries page by page with an opaque cursor", async () => {
    store = openMemoryStore(path.join(dir, "memory.sqlite"));
    // Two requests share a timestamp: the cursor must still split them exactly once.
    const times = ["01", "02", "02", "03", "04"].map((s) => `2026-01-01T00:00:${s}.000Z`);
    for (const [index, at] of times.entries()) {
      await store.createApproval(approval(`apr_${index}`, `cli_${index}`, at));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listApprovals({ limit: 2, ...(cursor ? { cursor } : {}) });
      for (const row of page.approvals) {
        expect(row.summary.length).toBeLessThanOrEqual(201);
        expect(row).toMatchObject({ diff_bytes: 10_000 });
        expect(row).not.toHaveProperty("diff");
      }
      seen.push(...page.approvals.map((row) => row.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["apr_4", "apr_3", "apr_2", "apr_1", "apr_0"]);
    await expect(store.listApprovals({ limit: 2, cursor: "garbage" })).rejects.toThrow(/invalid cursor/);
  });

  const page = (scope: string, pagePath: string, body: string) =>
    preparePageWrite({ scope, path: pagePath, body, author: "cli_a" });

  it("applies a batch of writes exactly as the same writes one at a time", async () => {
    const writes = [
      page("p", "a", "# A\n\nThe queue retries [[b]]."),
      page("p", "b", "# B\n\nParks a message after [[a]]."),
      page("_global", "a", "# Global A\n\nUma página em português sobre filas."),
      page("p", "a", "# A again\n\nA second version that links [[c]]."),
    ];
    const dump = (file: string) => {
      const db = new Database(file, { readonly: true });
      try {
        return ["pages", "page_versions", "edges", "removed_pages", "meta"].map((table) =>
          db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all(),
        );
      } finally {
        db.close();
      }
    };
    const one = openMemoryStore(path.join(dir, "one.sqlite"));
    for (const write of writes) await one.writePage(write, "2026-01-01T00:00:00.000Z");
    one.close();
    store = openMemoryStore(path.join(dir, "batch.sqlite"));
    await store.writePages(writes, "2026-01-01T00:00:00.000Z");
    store.close();
    store = undefined;
    expect(dump(path.join(dir, "batch.sqlite"))).toEqual(dump(path.join(dir, "one.sqlite")));
  });

  it(`follows at most ${MAX_NEIGHBOURS} links of an agent-written hub page, as heads without bodies`, async () => {
    store = openMemoryStore(path.join(dir, "hub.sqlite"));
    const targets = Array.from({ length: MAX_NEIGHBOURS + 100 }, (_, index) => `t${index}`);
    await store.writePages(
      [
        page("p", "hub", `# Hub\n\n${targets.map((target) => `[[${target}]]`).join(" ")}`),
        ...targets.map((target) => page("p", target, `# ${target}\n\n${"x".repeat(2000)}`)),
      ],
      "2026-01-01T00:00:00.000Z",
    );
    const links = await store.neighbours(["p"], ["hub"]);
    expect(links).toHaveLength(MAX_NEIGHBOURS);
    expect(links[0]?.page).not.toHaveProperty("body");
  });

  it("reads languages, page heads, neighbours and edges both ways within the scopes", async () => {
    store = openMemoryStore(path.join(dir, "memory.sqlite"));
    expect(await store.languages()).toEqual([]);
    await store.writePages(
      [
        page("p", "a", "# A\n\nThe billing queue retries three times before it parks [[b]]."),
        page("p", "b", "# B\n\nA parked message waits for an operator, see [[a]]."),
        page("p", "c", "# C\n\nA fila de cobrança tenta três vezes antes de estacionar [[a]]."),
        page("q", "d", "# D\n\nAnother scope's page that links [[a]] too."),
      ],
      "2026-01-01T00:00:00.000Z",
    );
    expect(await store.languages()).toEqual(["en", "pt"]);
    const a = (await store.getPage("p", "a")) as NonNullable<Awaited<ReturnType<MemoryStore["getPage"]>>>;
    const heads = await store.pageHeads([a.key, 999]);
    expect([...heads.values()]).toEqual([
      { key: a.key, scope: "p", path: "a", feedback: { helpful: 0, not_helpful: 0, stale: 0, wrong: 0 } },
    ]);
    const links = await store.neighbours(["p"], ["a"]);
    expect(links.map((link) => [link.from, link.type, link.page.path]).sort()).toEqual([
      ["a", "links_to", "b"],
      ["a", "links_to", "b"],
      ["a", "links_to", "c"],
    ]);
    expect(await store.backlinks("p", "a")).toEqual([
      { from: "b", type: "links_to" },
      { from: "c", type: "links_to" },
    ]);
    // An edge between two of the paths matches both directions and is listed once.
    expect(await store.edgesAround(["p", "q"], ["a", "b"])).toEqual([
      { scope: "p", from: "a", type: "links_to", to: "b" },
      { scope: "p", from: "b", type: "links_to", to: "a" },
      { scope: "p", from: "c", type: "links_to", to: "a" },
      { scope: "q", from: "d", type: "links_to", to: "a" },
    ]);
    expect(await store.edgesAround(["p"], ["a", "b"], 2)).toHaveLength(2);
  });
});
