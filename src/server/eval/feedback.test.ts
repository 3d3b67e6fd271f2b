import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../audit/store.js";
import { feedbackJudgments } from "./feedback.js";

let nextId = 1;
const call = (
  minute: number,
  tool: string,
  detail: Record<string, unknown>,
  who: { credential?: string; session?: string | null; status?: string } = {},
): AuditRecord => ({
  id: nextId++,
  at: new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString(),
  kind: "tool_call",
  tool,
  endpoint: "context",
  credential_id: who.credential ?? "cli_a",
  session_id: who.session === undefined ? "s1" : who.session,
  tier: "read",
  status: (who.status ?? "SUCCESS") as "SUCCESS",
  latency_ms: 1,
  tokens_consumed: 1,
  guardrail_checked: true,
  detail,
});

describe("judgments from the audit log", () => {
  it("pairs each search with the documents its caller opened after it, within the window", () => {
    const events = [
      call(0, "context_search", { query: "deploy billing" }),
      call(1, "context_get_document", { document_id: "doc_1" }),
      call(2, "resources/read", { uri: "ivoai://context/docs/run%20books/deploy.md" }),
      // Another caller's read, and a failed one, are not this search's.
      call(2, "context_get_document", { document_id: "doc_x" }, { credential: "cli_b" }),
      call(2, "context_get_document", { document_id: "doc_y" }, { status: "FAILED" }),
      call(3, "context_search", { query: "vacation" }),
      // Too late: 11 minutes after the search.
      call(14, "context_get_document", { document_id: "doc_late" }),
      call(20, "context_search", { query: "Deploy billing " }),
      call(21, "context_get_document", { document_id: "doc_2" }),
      call(22, "context_search", { query: "nothing opened after this" }),
    ];
    const { queries, qrels } = feedbackJudgments(events.reverse());
    expect(queries).toEqual([{ id: "audit-1", text: "deploy billing" }]);
    expect([...(qrels.get("audit-1") ?? [])]).toEqual([
      ["doc_1", 1],
      ["docs:run books/deploy.md", 1],
      ["doc_2", 1],
    ]);
  });

  it("ignores searches recorded without their query (before the audit kept it)", () => {
    const events = [call(0, "context_search", {}), call(1, "context_get_document", { document_id: "doc_1" })];
    expect(feedbackJudgments(events).queries).toEqual([]);
  });
});
