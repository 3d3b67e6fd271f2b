// The gate's bulk decision on a real SQLite memory store: every request gets its own outcome, in order, and
// one that fails (a stored request whose change cannot be prepared) neither stops nor hides the others.
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import type { ApprovalRecord } from "../../protocol/approvals.js";
import { type MemoryStore, openMemoryStore } from "../memory/store.js";
import { createApprovalGate } from "./gate.js";

const NOW = new Date("2026-12-03T14:00:00.000Z");
let store: MemoryStore;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  const made = await tempDir();
  cleanup = made.cleanup;
  store = await openMemoryStore(path.join(made.dir, "memory.sqlite"));
});
afterEach(async () => {
  await store.close();
  await cleanup();
});

function request(id: string, payload: Record<string, unknown>): ApprovalRecord {
  return {
    id,
    created_at: NOW.toISOString(),
    expires_at: "2026-12-10T00:00:00.000Z",
    status: "pending",
    tool: "memory_write_page",
    action: "write_page",
    scope: "_global",
    path: `notes/${id}`,
    requester: "cli_agent",
    session_id: null,
    summary: `Create notes/${id}`,
    diff: "",
    payload: { scope: "_global", path: `notes/${id}`, body: "text", author: "cli_agent", ...payload },
    base_version: 0,
    decided_by: null,
    decided_at: null,
    reason: null,
  };
}

it("decides the rest of a bulk approval when one request fails, and says which one", async () => {
  await store.createApproval(request("apr_1", {}));
  // A relation type the write refuses: preparing this change throws when it is approved.
  await store.createApproval(request("apr_2", { relations: { "not a type!": ["x"] } }));
  await store.createApproval(request("apr_3", {}));
  const gate = createApprovalGate({ store, now: () => NOW });
  const results = await gate.decideMany(["apr_1", "apr_2", "apr_3", "apr_1"], true, "operator:test");
  expect(results).toEqual([
    { id: "apr_1", outcome: "applied" },
    { id: "apr_2", outcome: "error", message: expect.stringContaining("invalid relation type") },
    { id: "apr_3", outcome: "applied" },
  ]);
  expect((await store.getPage("_global", "notes/apr_3"))?.version).toBe(1);
  expect((await store.getApproval("apr_2"))?.status).toBe("pending");
});
