// An approval request as the gate keeps it and the /v1/approvals API answers it (types only: the web console
// imports them too).
import type { ApprovalChanges } from "./changes.js";

export type ApprovalAction = "write_page" | "delete_page" | "feedback";
export type ApprovalStatus = "pending" | "applied" | "rejected" | "expired" | "conflict";

export interface ApprovalRecord {
  id: string;
  created_at: string;
  expires_at: string;
  status: ApprovalStatus;
  tool: string;
  action: ApprovalAction;
  scope: string;
  path: string;
  requester: string;
  session_id: string | null;
  summary: string;
  diff: string;
  /** The change itself: a PageWrite for write_page, {kind, note} for feedback, {} for delete_page. */
  payload: Record<string, unknown>;
  /** Page version the change was made against (0 = page did not exist). */
  base_version: number;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
}

/** What a request says it is, who asks and why: shared by a proposal and an approval list's summary. */
export type ApprovalRequestField =
  | "tool"
  | "action"
  | "scope"
  | "path"
  | "requester"
  | "session_id"
  | "summary";

/** What an approval list shows: metadata only, never the body, diff or payload (`show` gives those). */
export type ApprovalSummary = Pick<
  ApprovalRecord,
  "id" | "status" | ApprovalRequestField | "created_at" | "expires_at" | "decided_by" | "decided_at"
> & {
  diff_bytes: number;
  payload_bytes: number;
  /** The requester's name (enrolled or Web MCP client), null when the credential is no longer known. */
  requester_name: string | null;
};

/** GET /v1/approvals/:id and `approvals show --json`: the request, its requester's name, and what it changes. */
export type ApprovalDetail = ApprovalRecord & {
  requester_name: string | null;
  changes: ApprovalChanges;
};

/**
 * GET /v1/approvals query: every filter optional and combined with AND. `requester` matches the credential id
 * or its name (exact); `q` is a case-insensitive substring of the summary or path; `before`/`after` bound
 * created_at (ISO times), which is how "older than an hour" is asked.
 */
export interface ApprovalListQuery {
  status?: ApprovalStatus;
  limit?: number;
  cursor?: string;
  requester?: string;
  scope?: string;
  tool?: string;
  q?: string;
  before?: string;
  after?: string;
}

/** At most this many requests in one bulk decision. */
export const MAX_BULK_DECISION = 200;

/** POST /v1/approvals/decide (approvals:decide, CSRF in the console): one decision over many requests. */
export interface BulkDecisionRequest {
  ids: string[];
  approve: boolean;
  reason?: string;
}

/** Each request's outcome: a decision is applied at most once whatever else the batch holds. */
export interface BulkDecisionResult {
  id: string;
  /** `error`: this request could not be decided (its message says why); the others still were. */
  outcome:
    | "applied"
    | "rejected"
    | "conflict"
    | "expired"
    | "already_decided"
    | "not_found"
    | "forbidden"
    | "error";
  message?: string;
}

export interface BulkDecisionResponse {
  results: BulkDecisionResult[];
}

export interface ApprovalPage {
  approvals: ApprovalSummary[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}
