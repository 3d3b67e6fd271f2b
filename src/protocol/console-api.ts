// The HTTP API the web console calls (the same /v1 API scripts use with a bearer credential). Types only, so
// the browser bundle (web/) imports them without pulling server code.
import type { ApprovalStatus } from "./approvals.js";
import type { Scope } from "./scopes.js";

// ---- Sign-in -------------------------------------------------------------------------------------------------

export const CONSOLE_ROLES = ["viewer", "approver", "admin"] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** Prefix of a single-use console sign-in code (`ivoai server console login`). */
export const CONSOLE_CODE_PREFIX = "ivoai_con_";
/** The session cookie's name: `__Host-` prefixed on https (it needs Secure), plain on loopback http. */
export const CONSOLE_COOKIE = "ivoai_console";
export const CONSOLE_COOKIE_SECURE = "__Host-ivoai_console";
/** Header every console mutation carries (the session's CSRF token). */
export const CSRF_HEADER = "x-csrf-token";
/**
 * Header every console request carries: whole seconds since the person last typed, clicked or scrolled. The
 * page polls on its own, so a request alone is no sign of a person; the idle timeout counts from this.
 */
export const IDLE_HEADER = "x-ivoai-idle";

/** POST /v1/console/session  body {code}  → 200 ConsoleSession + Set-Cookie (no bearer, rate limited). */
export interface ConsoleSignIn {
  code: string;
}

/** GET /v1/console/session → the signed-in person (cookie only); DELETE revokes it (CSRF) → 204. */
export interface ConsoleSession {
  /** Who signed in (the login's --name, else "console"). */
  name: string;
  role: ConsoleRole;
  scopes: Scope[];
  /** Held in memory by the page, sent as X-CSRF-Token on every mutation; never stored. */
  csrf_token: string;
  /** The absolute end of this session; the idle end moves with each request. */
  expires_at: string;
  idle_expires_at: string;
}

// ---- Overview: GET /v1/admin/overview (status:read) -----------------------------------------------------------

export interface Overview {
  server_version: string;
  protocol_version: string;
  started_at: string;
  uptime_seconds: number;
  ready: { status: "ready" | "degraded" | "not_ready"; degraded: string[]; failed: string[] };
  counts: {
    clients_active: number;
    oauth_clients_active: number;
    documents: number;
    chunks: number;
    pages: number;
    pending_approvals: number;
  };
  /** The most recent ingest of any connector, or null if none ran (kept for older clients; see `ingests`). */
  last_ingest: (LastIngest & { connector: string }) | null;
  /** Every connector's last ingest, newest first; connectors that never ingested are left out. */
  ingests: (LastIngest & { connector: string })[];
}

// ---- Approvals: the existing /v1/approvals routes; plus GET /v1/approvals/counts (approvals:read) -------------

export type ApprovalStatusName = ApprovalStatus;
export type ApprovalCounts = Record<ApprovalStatusName, number>;

// ---- Activity (audit:read) ------------------------------------------------------------------------------------

export type ActivityBucket = "minute" | "hour" | "day";

export interface ActivityFigures {
  calls: number;
  /** Calls that failed: status FAILED (the tool or its guardrail refused) or REJECTED (never ran). */
  errors: number;
  p50_ms: number;
  p95_ms: number;
  tokens: number;
}

/** GET /v1/audit/activity?since=ISO&until=ISO&bucket=minute|hour|day */
export interface Activity {
  since: string;
  until: string;
  bucket: ActivityBucket;
  totals: ActivityFigures;
  /** One entry per bucket from since to until, empty buckets included (calls 0). */
  series: (ActivityFigures & { start: string })[];
  /** Largest first, at most 50 each. */
  by_tool: (ActivityFigures & { key: string })[];
  /** `name`: the enrolled client's or Web MCP client's name, when the credential is still known. */
  by_credential: (ActivityFigures & { key: string; name?: string })[];
  by_session: (ActivityFigures & { key: string })[];
}

/**
 * GET /v1/audit/events?since=ISO&until=ISO&limit=N&kind=…&credential_id=…&tool=…&status=…&session_id=…&q=TEXT
 * &before=ID → AuditEventPage: events newest last (the CLI's `server audit --json` shape); the page before is
 * `before` = this page's first id.
 */
export interface AuditEventPage {
  events: AuditEventRow[];
  /** Credential id → name, for the credentials of this page's tool calls that are still known. */
  credential_names: Record<string, string>;
}

/** Every kind of event the audit log records (the server's store and the console's kind filter share this list). */
export const AUDIT_KINDS = [
  "tool_call",
  "approval_decision",
  "approval_expired",
  "page_expired",
  "client_revoked",
  "retrieval_eval",
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEventRow {
  id: number;
  at: string;
  kind: string;
  [field: string]: unknown;
}

/**
 * GET /v1/audit/export?format=jsonl|csv&… (the events' filters) → the matching events newest first, as an
 * attachment: JSON Lines (each line an AuditEventRow) or CSV (a header row, then one row an event).
 */
export type AuditExportFormat = "jsonl" | "csv";

/**
 * GET /v1/audit/timeline?session_id=ID&as_of=ISO → one session's events, oldest first: the episodic events its
 * hooks recorded and the tool calls the audit log holds for it, merged in time order.
 */
export interface SessionTimeline {
  session_id: string;
  as_of: string;
  events: {
    id: string;
    /** An episode's kind, or "tool_call". */
    kind: string;
    /** Where the event came from (absent from servers before tool calls were listed: an episode). */
    source?: "episode" | "tool_call";
    /** An episode's project; empty for a tool call. */
    project: string;
    recorded_at: string;
    valid_from: string | null;
    valid_to: string | null;
    /** The event's content: only for the credential that recorded it (episodes are isolated per credential). */
    data?: Record<string, unknown>;
    /** Set instead of `data` when the caller did not record the event. */
    data_withheld?: true;
    /** The credential that recorded the event (or made the call). */
    credential_id?: string;
    /** That credential's name, when it is still known. */
    credential_name?: string;
    /** A tool call's tool, endpoint, status and duration. */
    tool?: string;
    endpoint?: string;
    status?: string;
    latency_ms?: number;
  }[];
}

// ---- Knowledge ------------------------------------------------------------------------------------------------

export interface LastIngest {
  at: string;
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
  skipped: number;
  skipped_by_reason: Record<string, number>;
  skipped_examples: { path: string; reason: string }[];
  complete: boolean;
  error?: string;
}

/** GET /v1/admin/connectors (connector:read) → {connectors}: each with its last ingest summary. */
export interface ConnectorView {
  name: string;
  type: string;
  path: string;
  created_at: string;
  last_ingest_at: string | null;
  documents: number;
  last_ingest: LastIngest | null;
}

/** GET /v1/context/search?q=TEXT&limit=N&source=S (context:read): the context_search tool's data. */
export interface SearchResults {
  query: string;
  count: number;
  untrusted: true;
  results: {
    document_id: string;
    source: string;
    path: string;
    title: string;
    chunk_index: number;
    score: number;
    snippet: string;
    [field: string]: unknown;
  }[];
}

export interface PageSummary {
  scope: string;
  path: string;
  title: string;
  version: number;
  updated_at: string;
  author: string;
  tags: string[];
  feedback: Record<string, number>;
  /** Any stale/wrong feedback. */
  flagged: boolean;
}

/** GET /v1/memory/pages?q=TEXT&scope=S&limit=N&cursor=C (memory:read), most recently updated first. */
export interface PageList {
  pages: PageSummary[];
  next_cursor: string | null;
}

/** GET /v1/memory/page?scope=S&path=P (memory:read). */
export interface PageDetail {
  page: PageSummary & {
    body: string;
    relations: Record<string, string[]>;
    expires_at: string | null;
    created_at: string;
  };
  /** Every version, newest first (metadata only). */
  versions: { version: number; title: string; author: string; at: string; deleted?: boolean }[];
  backlinks: { from: string; type: string }[];
}

/** GET /v1/memory/graph?scope=S&path=P&depth=1|2 (memory:read): the graph around one page. */
export interface PageGraph {
  center: { scope: string; path: string };
  nodes: { scope: string; path: string; title: string; missing: boolean }[];
  edges: { from: string; to: string; type: string }[];
  /** True when nodes past the cap (200) were left out. */
  truncated?: boolean;
}

// ---- Clients (clients:read; revoking needs clients:revoke) ------------------------------------------------------

/** GET /v1/admin/clients → {clients}; POST /v1/admin/clients/:id/revoke → the client. */
export interface EnrolledClient {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  enrollment_id: string;
  revoked_at: string | null;
  /** When the client last made a tool call (from the audit log); null if never, or no audit log is kept. */
  last_used_at: string | null;
}

/** GET /v1/admin/oauth-clients → {clients}; POST /v1/admin/oauth-clients/:id/revoke, /v1/admin/grants/:id/revoke. */
export interface WebClient {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  created_at: string;
  revoked_at: string | null;
  /** When the client last made a tool call (from the audit log); null if never, or no audit log is kept. */
  last_used_at: string | null;
  grants: {
    id: string;
    scopes: string[];
    resource: string;
    created_at: string;
    expires_at: string;
    revoked_at: string | null;
    last_refreshed_at: string | null;
  }[];
}

// ---- Console sessions (admin role only) -----------------------------------------------------------------------

/** Where a console session stands now. */
export type ConsoleSessionStateName = "active" | "idle" | "expired" | "revoked";

/**
 * GET /v1/console/sessions → {sessions}, newest first; POST /v1/console/sessions/:id/revoke (CSRF) → the session.
 * A session's token and its hash are never sent.
 */
export interface ConsoleSessionView {
  id: string;
  name: string;
  role: ConsoleRole;
  created_at: string;
  last_seen_at: string;
  /** When it ends for inactivity unless used again (never after `expires_at`). */
  idle_expires_at: string;
  /** The absolute end. */
  expires_at: string;
  revoked_at: string | null;
  state: ConsoleSessionStateName;
  /** The session making this request. */
  current: boolean;
}

/** The JSON body every gateway error answers with. */
export interface ProblemBody {
  error: string;
  message: string;
}
