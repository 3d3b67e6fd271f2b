// An approval request as the gate keeps it and the /v1/approvals API answers it (types only: the web console
// imports them too).

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
> & { diff_bytes: number; payload_bytes: number };

export interface ApprovalPage {
  approvals: ApprovalSummary[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}
