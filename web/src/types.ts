// Web-side copies of the approval shapes (src/server/memory/store.ts): the browser bundle never imports server code.
export type {
  Activity,
  ActivityBucket,
  ActivityFigures,
  ApprovalCounts,
  ApprovalStatusName,
  ConnectorView,
  ConsoleRole,
  ConsoleSession,
  EnrolledClient,
  LastIngest,
  Overview,
  PageDetail,
  PageGraph,
  PageList,
  PageSummary,
  ProblemBody,
  SearchResults,
  SessionTimeline,
  WebClient,
} from "../../src/protocol/console-api.js";

import type { ApprovalStatusName } from "../../src/protocol/console-api.js";

export type ApprovalAction = "write_page" | "delete_page" | "feedback";

/** One row of GET /v1/approvals: metadata only. */
export interface ApprovalSummary {
  id: string;
  status: ApprovalStatusName;
  tool: string;
  action: ApprovalAction;
  scope: string;
  path: string;
  requester: string;
  session_id: string | null;
  summary: string;
  created_at: string;
  expires_at: string;
  decided_by: string | null;
  decided_at: string | null;
  diff_bytes: number;
  payload_bytes: number;
}

/** GET /v1/approvals/:id: the full request, diff included. */
export interface ApprovalRecord extends Omit<ApprovalSummary, "diff_bytes" | "payload_bytes"> {
  diff: string;
  payload: Record<string, unknown>;
  base_version: number;
  reason: string | null;
}

export interface ApprovalPage {
  approvals: ApprovalSummary[];
  next_cursor: string | null;
}

export type DecisionOutcomeName = "applied" | "rejected" | "conflict" | "expired" | "already_decided";

/** POST /v1/approvals/:id/approve|reject (200, or 409 for conflict/expired/already_decided). */
export interface DecisionResult {
  outcome: DecisionOutcomeName;
  approval: ApprovalRecord;
  message?: string;
}
