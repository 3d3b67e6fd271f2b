// The approvals store's contract, run on SQLite and PostgreSQL: exactly-once apply whichever connection
// decides, conflict detection, four eyes, the pending cap, expiry and keyset pagination.
import { afterEach, expect, it } from "vitest";
import { type PageInput, preparePageWrite } from "../memory/page-write.js";
import { createMemoryStore, type MemoryStore } from "../memory/store.js";
import { describeBackends } from "../store/backends.test-kit.js";
import type { ApprovalAction, ApprovalRecord } from "./store.js";

const AT = "2026-01-01T00:00:00.000Z";
const LATER = "2026-01-02T00:00:00.000Z";

function approval(
  id: string,
  requester: string,
  created_at: string,
  overrides: Partial<ApprovalRecord> & { action?: ApprovalAction } = {},
): ApprovalRecord {
  const pagePath = overrides.path ?? `notes/${id}`;
  return {
    id,
    created_at,
    expires_at: "2030-01-01T00:00:00.000Z",
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "_global",
    path: pagePath,
    requester,
    session_id: null,
    summary: "s".repeat(1000),
    diff: "d".repeat(10_000),
    payload: {
      scope: "_global",
      path: pagePath,
      body: `# ${id}\n\n${"b".repeat(10_000)}`,
      author: requester,
    },
    base_version: 0,
    decided_by: null,
    decided_at: null,
    reason: null,
    ...overrides,
  };
}

const prepare = (record: ApprovalRecord) =>
  record.action === "write_page" ? preparePageWrite(record.payload as unknown as PageInput) : undefined;

describeBackends("approvals store", (kit) => {
  let count = 0;
  const opened: MemoryStore[] = [];
  const open = async (schema = `approvals_${++count}`) => {
    const store = await createMemoryStore(await kit.open(schema));
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it("refuses a request past the requester's pending cap, counting only unexpired pending ones", async () => {
    const store = await open();
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
    // An expired pending request no longer counts, and a decided one never did.
    await store.createApproval(
      approval("apr_5", "cli_c", "2026-01-01T00:00:05.000Z", { expires_at: "2026-01-01T00:00:06.000Z" }),
      limits,
    );
    await store.createApproval(approval("apr_6", "cli_c", "2026-01-01T00:00:07.000Z"), limits);
    expect(await store.createApproval(approval("apr_7", "cli_c", "2026-01-01T00:00:08.000Z"), limits)).toBe(
      "created",
    );
  });

  it("keeps the pending cap when many connections file for one requester at once", async () => {
    const schema = `approvals_${++count}`;
    const stores = [await open(schema), await open(schema), await open(schema)];
    const filed = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        (stores[index % 3] as MemoryStore).createApproval(
          approval(`apr_c${index}`, "cli_busy", `2026-01-01T00:00:${String(index).padStart(2, "0")}.000Z`),
          { maxPendingPerRequester: 5 },
        ),
      ),
    );
    expect(filed.filter((outcome) => outcome === "created")).toHaveLength(5);
    expect((await stores[0]?.approvalCounts())?.pending).toBe(5);
  });

  it("lists summaries page by page with an opaque cursor, newest first, by status", async () => {
    const store = await open();
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
        expect(row).not.toHaveProperty("payload");
      }
      seen.push(...page.approvals.map((row) => row.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(["apr_4", "apr_3", "apr_2", "apr_1", "apr_0"]);
    await expect(store.listApprovals({ limit: 2, cursor: "garbage" })).rejects.toThrow(/invalid cursor/);
    await store.decide({ id: "apr_2", approve: false, actor: "alice", reason: "no", at: AT }, prepare);
    const rejected = await store.listApprovals({ status: "rejected", limit: 10 });
    expect(rejected.approvals.map((row) => row.id)).toEqual(["apr_2"]);
    expect(rejected.next_cursor).toBeNull();
    expect(await store.approvalCounts()).toEqual({
      pending: 4,
      applied: 0,
      rejected: 1,
      expired: 0,
      conflict: 0,
    });
  });

  it("applies an approval exactly once under 20 concurrent decisions from 3 connections", async () => {
    const schema = `approvals_${++count}`;
    const stores = [await open(schema), await open(schema), await open(schema)];
    const first = stores[0] as MemoryStore;
    await first.createApproval(approval("apr_race", "cli_agent", AT, { path: "notes/race" }));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        (stores[index % 3] as MemoryStore).decide(
          { id: "apr_race", approve: true, actor: `approver ${index}`, reason: null, at: LATER },
          prepare,
        ),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.outcome === "applied")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.outcome === "already_decided")).toHaveLength(19);
    expect(await first.pageVersions("_global", "notes/race")).toHaveLength(1);
    expect((await first.getApproval("apr_race"))?.status).toBe("applied");
    expect((await first.stats()).pages).toBe(1);
  });

  it("decides two requests on one page from two connections: one applies, the other is a conflict", async () => {
    const schema = `approvals_${++count}`;
    const [one, two] = [await open(schema), await open(schema)] as [MemoryStore, MemoryStore];
    await one.createApproval(approval("apr_a", "cli_a", AT, { path: "notes/shared" }));
    await one.createApproval(approval("apr_b", "cli_b", AT, { path: "notes/shared" }));
    const outcomes = await Promise.all([
      one.decide({ id: "apr_a", approve: true, actor: "alice", reason: null, at: LATER }, prepare),
      two.decide({ id: "apr_b", approve: true, actor: "bob", reason: null, at: LATER }, prepare),
    ]);
    expect(outcomes.map((outcome) => outcome.outcome).sort()).toEqual(["applied", "conflict"]);
    expect(await one.pageVersions("_global", "notes/shared")).toHaveLength(1);
  });

  it("detects a page that changed since the request, and a page deleted since", async () => {
    const store = await open();
    await store.createApproval(approval("apr_stale", "cli_a", AT, { path: "notes/moved" }));
    await store.writePage(
      preparePageWrite({ scope: "_global", path: "notes/moved", body: "# Moved on", author: "cli_b" }),
      AT,
    );
    const outcome = await store.decide(
      { id: "apr_stale", approve: true, actor: "alice", reason: null, at: LATER },
      prepare,
    );
    expect(outcome).toMatchObject({ outcome: "conflict", approval: { status: "conflict" } });
    expect(outcome.outcome === "conflict" && outcome.message).toMatch(/version 0 → 1/);
    expect((await store.getPage("_global", "notes/moved"))?.body).toBe("# Moved on");

    // A delete request filed against version 1, after which the page is gone.
    await store.createApproval(
      approval("apr_del", "cli_a", AT, {
        action: "delete_page",
        path: "notes/moved",
        base_version: 1,
        payload: {},
      }),
    );
    await store.createApproval(
      approval("apr_fb", "cli_a", AT, {
        action: "feedback",
        path: "notes/moved",
        base_version: 1,
        payload: { kind: "helpful" },
      }),
    );
    expect(
      (await store.decide({ id: "apr_del", approve: true, actor: "alice", reason: null, at: LATER }, prepare))
        .outcome,
    ).toBe("applied");
    expect(await store.getPage("_global", "notes/moved")).toBeUndefined();
    const feedback = await store.decide(
      { id: "apr_fb", approve: true, actor: "alice", reason: null, at: LATER },
      prepare,
    );
    expect(feedback).toMatchObject({ outcome: "conflict", message: "the page no longer exists" });
    expect((await store.pageVersions("_global", "notes/moved")).map((v) => [v.version, v.deleted])).toEqual([
      [2, true],
      [1, false],
    ]);
  });

  it("never lets a credential approve its own request; it may withdraw it, and the operator may approve", async () => {
    const store = await open();
    await store.createApproval(approval("apr_own", "cli_self", AT));
    await store.createApproval(approval("apr_own2", "cli_self", AT));
    await expect(
      store.decide(
        { id: "apr_own", approve: true, actor: "self", reason: null, at: LATER, credential: "cli_self" },
        prepare,
      ),
    ).rejects.toMatchObject({ code: "FORBIDDEN", data: { error: "self_approval" } });
    expect((await store.getApproval("apr_own"))?.status).toBe("pending");
    expect(
      (
        await store.decide(
          {
            id: "apr_own",
            approve: false,
            actor: "self",
            reason: "withdrawn",
            at: LATER,
            credential: "cli_self",
          },
          prepare,
        )
      ).outcome,
    ).toBe("rejected");
    expect(
      (
        await store.decide(
          { id: "apr_own2", approve: true, actor: "other", reason: null, at: LATER, credential: "cli_other" },
          prepare,
        )
      ).outcome,
    ).toBe("applied");
    await expect(
      store.decide({ id: "apr_missing", approve: true, actor: "a", reason: null, at: LATER }, prepare),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("expires pending requests past their time, once, and refuses to apply an expired one", async () => {
    const store = await open();
    const soon = { expires_at: "2026-01-01T12:00:00.000Z" };
    await store.createApproval(approval("apr_x1", "cli_a", AT, soon));
    await store.createApproval(approval("apr_x2", "cli_a", AT, soon));
    await store.createApproval(approval("apr_keep", "cli_a", AT));
    expect((await store.expireApprovals("2026-01-01T11:59:59.999Z")).sort()).toEqual([]);
    expect((await store.expireApprovals(LATER)).sort()).toEqual(["apr_x1", "apr_x2"]);
    expect(await store.expireApprovals(LATER)).toEqual([]);
    expect(await store.getApproval("apr_x1")).toMatchObject({ status: "expired", decided_by: "system" });

    await store.createApproval(approval("apr_late", "cli_a", AT, soon));
    const late = await store.decide(
      { id: "apr_late", approve: true, actor: "alice", reason: null, at: LATER },
      prepare,
    );
    expect(late).toMatchObject({ outcome: "expired", approval: { status: "expired" } });
    expect(await store.getPage("_global", "notes/apr_late")).toBeUndefined();
    expect(
      (await store.decide({ id: "apr_late", approve: true, actor: "bob", reason: null, at: LATER }, prepare))
        .outcome,
    ).toBe("already_decided");
  });
  it("filters a list by requesters, scope, tool, text (case-insensitive, wildcards literal) and age", async () => {
    const store = await open();
    const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;
    await store.createApproval(approval("apr_1", "cli_a", at(1), { summary: "Create Billing_Notes 100%" }));
    await store.createApproval(approval("apr_2", "cli_b", at(2), { summary: "Create billing notes" }));
    await store.createApproval(
      approval("apr_3", "cli_c", at(3), {
        tool: "memory_delete_page",
        action: "delete_page",
        scope: "project:git:acme/api",
        path: "ops/Runbook",
        summary: "Delete it",
      }),
    );
    const ids = async (query: Omit<Parameters<MemoryStore["listApprovals"]>[0], "limit">) =>
      (await store.listApprovals({ limit: 50, ...query })).approvals.map((row) => row.id);
    expect(await ids({ requesters: ["cli_a", "cli_c"] })).toEqual(["apr_3", "apr_1"]);
    expect(await ids({ scope: "project:git:acme/api" })).toEqual(["apr_3"]);
    expect(await ids({ tool: "memory_write_page" })).toEqual(["apr_2", "apr_1"]);
    expect(await ids({ q: "BILLING" })).toEqual(["apr_2", "apr_1"]);
    expect(await ids({ q: "billing_" })).toEqual(["apr_1"]);
    expect(await ids({ q: "100%" })).toEqual(["apr_1"]);
    expect(await ids({ q: "runbook" })).toEqual(["apr_3"]);
    expect(await ids({ before: at(3) })).toEqual(["apr_2", "apr_1"]);
    expect(await ids({ after: at(2), status: "pending" })).toEqual(["apr_3", "apr_2"]);
    expect(await ids({ q: "billing", requesters: ["cli_b"], before: at(3) })).toEqual(["apr_2"]);
    // Filters and the cursor combine: the next page of a filtered list stays filtered.
    const first = await store.listApprovals({ limit: 1, q: "billing" });
    expect(first.approvals.map((row) => row.id)).toEqual(["apr_2"]);
    const next = await store.listApprovals({ limit: 1, q: "billing", cursor: first.next_cursor as string });
    expect(next.approvals.map((row) => row.id)).toEqual(["apr_1"]);
    expect(next.next_cursor).toBeNull();
  });

  it("reads back one stored version of a page, deleted ones included", async () => {
    const store = await open();
    const write = (body: string, extra: Partial<PageInput> = {}) =>
      store.writePage(
        preparePageWrite({ scope: "_global", path: "v/page", body, author: "t", ...extra }),
        AT,
      );
    await write("first", { tags: ["a"], expires_at: "2030-01-01T00:00:00Z" });
    await write("second", { title: "Second" });
    const one = await store.pageVersion("_global", "v/page", 1);
    expect(one).toMatchObject({ version: 1, body: "first", tags: ["a"], deleted: false });
    expect(one?.expires_at).toBe("2030-01-01T00:00:00.000Z");
    expect(await store.pageVersion("_global", "v/page", 2)).toMatchObject({
      title: "Second",
      expires_at: null,
    });
    expect(await store.pageVersion("_global", "v/page", 3)).toBeUndefined();
    expect(await store.pageVersion("_global", "v/other", 1)).toBeUndefined();
  });
});
