// A page's session when its front matter names none, on SQLite and PostgreSQL: the proposer's session is kept
// through the approval gate (also for a request filed before inputs carried it), and memory_query ranks a turn
// with its session's window, never another session's.
import { afterEach, expect, it } from "vitest";
import type { ApprovalRecord } from "../../protocol/approvals.js";
import { createApprovalGate } from "../approvals/gate.js";
import { describeBackends } from "../store/backends.test-kit.js";
import { createMemorySearcher } from "./query.js";
import { writerSession } from "./session-term.js";
import { createMemoryStore, type MemoryStore } from "./store.js";

const AT = "2026-12-03T14:00:00.000Z";

function request(id: string, session: string | null, payload: Record<string, unknown> = {}): ApprovalRecord {
  return {
    id,
    created_at: AT,
    expires_at: "2026-12-10T00:00:00.000Z",
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "p",
    path: id,
    requester: "cli_agent",
    session_id: session,
    summary: `Create ${id}`,
    diff: "",
    payload: { scope: "p", path: id, author: "cli_agent", ...payload },
    base_version: 0,
    decided_by: null,
    decided_at: null,
    reason: null,
  };
}

describeBackends("memory sessions", (kit) => {
  let count = 0;
  const opened: MemoryStore[] = [];
  const open = async () => {
    const store = await createMemoryStore(await kit.open(`memory_sessions_${++count}`));
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it("ranks a plain turn with the turns its proposer's session wrote, kept through approval", async () => {
    const store = await open();
    const gate = createApprovalGate({ store, now: () => new Date(AT) });
    // a1 is filed as an input of today (session in the payload), a2 as one of before (only the request's id).
    const requests = [
      request("a1", null, {
        body: "Monica: Who wants the dinosaur museum on Saturday?",
        session: writerSession("cli_agent", "s-a"),
      }),
      request("b1", "s-b", { body: "Chandler: Count me out, my molar hurts." }),
      request("a2", "s-a", { body: "Ross: Me! I will bring the sandwiches." }),
      request("b2", "s-b", { body: "Joey: Pizza tonight then." }),
      request("n1", null, { body: "Janice: Oh my god." }),
    ];
    for (const record of requests) await store.createApproval(record);
    const results = await gate.decideMany(
      requests.map((record) => record.id),
      true,
      "operator:test",
    );
    expect(results.map((result) => result.outcome)).toEqual(Array(5).fill("applied"));

    const hits = await createMemorySearcher(store).search("dinosaur museum Saturday", ["p"], 10);
    expect(hits.map((hit) => [hit.page.path, hit.neighbour_of?.type ?? null])).toEqual([
      ["a1", null],
      ["a2", "session"],
    ]);
  });
});
