// The audit log: every MCP tool call (guardrail outcome and telemetry) and every human decision, in the audit
// store (a SQLite file, or the ivoai_audit schema every replica shares on PostgreSQL).
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { type Activity, AUDIT_KINDS as PROTOCOL_AUDIT_KINDS } from "../../protocol/console-api.js";
import type { SecurityTier, ToolStatus } from "../../protocol/tool-envelope.js";
import { createLogger } from "../../shared/logger.js";
import type { StoreBackend } from "../store/backend.js";
import { sqliteFileOf } from "../store/backend.js";
import { type Migration, migrate } from "../store/migrations.js";
import {
  containsPattern,
  type Dialect,
  likeOperator,
  type SqlDatabase,
  type SqlExecutor,
} from "../store/sql.js";
import { type ActivityQuery, aggregateActivity } from "./activity.js";

export interface ToolCallEvent {
  kind: "tool_call";
  tool: string;
  endpoint: string;
  credential_id: string;
  session_id: string | null;
  /** Null when the caller named a tool this endpoint does not offer. */
  tier: SecurityTier | null;
  /** REJECTED: refused before the tool ran (unknown tool, arguments failing the schema). */
  status: ToolStatus | "REJECTED";
  latency_ms: number;
  tokens_consumed: number;
  guardrail_checked: boolean;
  /** Why the guardrail refused or the call was rejected, or the approval a write created. */
  detail?: Record<string, unknown>;
}

/**
 * A person's or the system's decision: approvals, expiry, revoking a client (`client_revoked`), and an operator's
 * measurement of retrieval (`retrieval_eval`: methods and counts, no query text).
 */
export interface DecisionEvent {
  kind: "approval_decision" | "page_expired" | "approval_expired" | "client_revoked" | "retrieval_eval";
  actor: string;
  detail: Record<string, unknown>;
}

export type AuditEvent = ToolCallEvent | DecisionEvent;
/** The kinds the log records: the protocol's list, checked here against the events the store can hold. */
export const AUDIT_KINDS = PROTOCOL_AUDIT_KINDS satisfies readonly AuditEvent["kind"][];
export type AuditRecord = AuditEvent & { id: number; at: string };

export interface AuditListOptions {
  /** Events recorded at or after this time (ISO-8601). */
  since?: string;
  /** At most this many (default 1000, at most 100,000): the newest of those that match. */
  limit?: number;
  kind?: AuditEvent["kind"];
  /** Keyset cursor: only events with a smaller id (the previous page's first id), to page back in time. */
  before?: number;
  /** Events recorded before this time (ISO-8601). */
  until?: string;
  /** Tool calls of this credential. */
  credential_id?: string;
  /** Tool calls of this tool. */
  tool?: string;
  /** Tool calls with this status (SUCCESS, FAILED, REJECTED…). */
  status?: string;
  /** Tool calls in this session. */
  session_id?: string;
  /**
   * Events whose JSON text contains this text: keys and kinds included (`tool` matches every tool call), so it is
   * for values (a path, an id, a name). Case-insensitive on PostgreSQL; on SQLite only for ASCII letters.
   */
  text?: string;
}

export interface AuditLog {
  /**
   * Records an event, off the caller's path: events are written together, in one transaction, at most
   * AUDIT_MAX_DELAY_MS after the first one still pending, or at once when AUDIT_MAX_PENDING are pending.
   * That is what a crash (the process killed, not stopped) can lose: the events of the last AUDIT_MAX_DELAY_MS
   * (at most AUDIT_MAX_PENDING), and those of the one write in flight when it died (a transaction either
   * commits whole or not at all). Only tool calls wait: any other event (an approval decided, a client revoked,
   * a page expired) is rare and is a record of a security decision, so it is written with what is pending at
   * once. The promise resolves when the event is durable (it never rejects: a failed write goes to
   * `onWriteError`); callers await it for decisions and leave it for tool calls. `list`, `activity` and `close`
   * write what is pending first, and the server closes the log first on SIGTERM/SIGINT, so a stop loses nothing.
   */
  record(event: AuditEvent): Promise<void>;
  /** Writes pending events now; resolves when everything recorded so far is written (or reported lost). */
  flush(): Promise<void>;
  /** Events oldest first: the newest `limit` of those matching (page back with `before`). */
  list(options: AuditListOptions): Promise<AuditRecord[]>;
  /**
   * When each credential last made a tool call: the time of its newest event by id (null when it never did, or
   * its calls were pruned). One query; each credential costs one index probe (events_credential), whatever the
   * log's size.
   */
  lastUsed(credentialIds: readonly string[]): Promise<Map<string, string | null>>;
  /** Tool calls in a window, aggregated (the console's activity view). */
  activity(query: ActivityQuery): Promise<Activity>;
  /** Writes what is pending, then closes the database. */
  close(): Promise<void>;
}

/** The audit store's schema versions. Version 1 is the schema of the SQLite file before versioning (adopted). */
export const AUDIT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "events",
    up: {
      sqlite: `
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at);`,
      // Times compare as text in code-point order whatever the database's collation; the index holds the
      // primary key too, as SQLite's does, for the activity view's (at, id) keyset.
      postgres: `
CREATE TABLE IF NOT EXISTS events (
  id BIGSERIAL PRIMARY KEY, at TEXT COLLATE "C" NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at, id);`,
    },
  },
  {
    // The activity view reads these instead of each call's JSON (PostgreSQL parsing 100,000 bodies took
    // seconds of the database's CPU); earlier events are filled in from their JSON.
    version: 2,
    name: "tool call columns",
    up: {
      sqlite: `
ALTER TABLE events ADD COLUMN tool TEXT;
ALTER TABLE events ADD COLUMN credential_id TEXT;
ALTER TABLE events ADD COLUMN session_id TEXT;
ALTER TABLE events ADD COLUMN status TEXT;
ALTER TABLE events ADD COLUMN latency_ms REAL;
ALTER TABLE events ADD COLUMN tokens_consumed REAL;
UPDATE events SET tool = body ->> 'tool', credential_id = body ->> 'credential_id',
  session_id = body ->> 'session_id', status = body ->> 'status', latency_ms = body ->> 'latency_ms',
  tokens_consumed = body ->> 'tokens_consumed'
WHERE kind = 'tool_call';`,
      postgres: `
ALTER TABLE events ADD COLUMN tool TEXT, ADD COLUMN credential_id TEXT, ADD COLUMN session_id TEXT,
  ADD COLUMN status TEXT, ADD COLUMN latency_ms DOUBLE PRECISION, ADD COLUMN tokens_consumed DOUBLE PRECISION;
UPDATE events SET tool = j ->> 'tool', credential_id = j ->> 'credential_id', session_id = j ->> 'session_id',
  status = j ->> 'status', latency_ms = (j ->> 'latency_ms')::double precision,
  tokens_consumed = (j ->> 'tokens_consumed')::double precision
FROM (SELECT id AS event_id, body::jsonb AS j FROM events WHERE kind = 'tool_call') AS calls
WHERE events.id = calls.event_id;`,
    },
  },
  {
    // A credential's events and a session's in id order: the listing filtered by one pages back by id along the
    // index (no sort of the credential's calls), "last used" reads its newest entry, a timeline its calls.
    version: 3,
    name: "credential and session indexes",
    up: {
      sqlite: `
CREATE INDEX IF NOT EXISTS events_credential ON events (credential_id, id);
CREATE INDEX IF NOT EXISTS events_session ON events (session_id, id);`,
      postgres: `
CREATE INDEX IF NOT EXISTS events_credential ON events (credential_id, id);
CREATE INDEX IF NOT EXISTS events_session ON events (session_id, id);`,
    },
  },
];

/** Credentials per "last used" statement (each a UNION ALL arm with one parameter). */
const LAST_USED_CHUNK = 200;

/** The listing's statement: the newest `limit` events matching, newest first (the caller reverses them). */
export function listStatement(
  { since, limit, kind, before, until, credential_id, tool, status, session_id, text }: AuditListOptions,
  dialect: Dialect,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [since ?? "", Math.min(limit ?? 1000, 100_000)];
  let where = "at >= $1";
  if (kind) where += ` AND kind = $${params.push(kind)}`;
  if (before !== undefined) where += ` AND id < $${params.push(before)}`;
  if (until !== undefined) where += ` AND at < $${params.push(until)}`;
  if (credential_id !== undefined) where += ` AND credential_id = $${params.push(credential_id)}`;
  if (tool !== undefined) where += ` AND tool = $${params.push(tool)}`;
  if (status !== undefined) where += ` AND status = $${params.push(status)}`;
  if (session_id !== undefined) where += ` AND session_id = $${params.push(session_id)}`;
  if (text !== undefined && text.length > 0)
    where += ` AND body ${likeOperator(dialect)} $${params.push(containsPattern(text))} ESCAPE '\\'`;
  return { sql: `SELECT id, at, body FROM events WHERE ${where} ORDER BY id DESC LIMIT $2`, params };
}

/**
 * The newest event of the credential in parameter `$n`, and its time (NULL without one): one probe at the end of
 * its (credential_id, id) range on both backends. Ids follow commit order, so this is the last call written.
 */
export function lastUsedArm(n: number): string {
  return `SELECT CAST($${n} AS TEXT) AS credential_id, (SELECT at FROM events WHERE id = (SELECT MAX(id) FROM events WHERE credential_id = $${n})) AS at`;
}

/** Events held for one write at most: a burst this large is written at once. */
export const AUDIT_MAX_PENDING = 256;
/** How long the first pending event waits for others to share its transaction. */
export const AUDIT_MAX_DELAY_MS = 20;
/** Rows per INSERT statement (a batch larger than this takes several statements in its one transaction). */
const ROWS_PER_STATEMENT = 64;

export interface AuditLogOptions {
  now?: () => Date;
  /** A write that failed, with how many events it lost (default: an error line of the standard logger). */
  onWriteError?: (error: Error, lost: number) => void;
}

/** An event's columns: the time, the kind, the JSON, and a tool call's figures (null for other kinds). */
type Row = [
  at: string,
  kind: string,
  body: string,
  tool: string | null,
  credential_id: string | null,
  session_id: string | null,
  status: string | null,
  latency_ms: number | null,
  tokens_consumed: number | null,
];
const COLUMNS = "at, kind, body, tool, credential_id, session_id, status, latency_ms, tokens_consumed";
const WIDTH = 9;

/** A number as the JSON text holds it (JSON has no NaN or Infinity: they become null). */
const finite = (value: number) => (Number.isFinite(value) ? value : null);
/**
 * A caller's text as a column holds it: PostgreSQL refuses NUL in text, and one NUL in an agent's tool name must
 * not fail the write of every event sharing its batch. Both backends store U+FFFD instead; the JSON keeps it.
 */
const text = (value: string | null) =>
  value === null || !value.includes("\u0000") ? value : value.replaceAll("\u0000", "\uFFFD");

function rowOf(at: string, event: AuditEvent): Row {
  const body = JSON.stringify(event);
  if (event.kind !== "tool_call") return [at, event.kind, body, null, null, null, null, null, null];
  return [
    at,
    event.kind,
    body,
    text(event.tool),
    text(event.credential_id),
    text(event.session_id),
    text(event.status),
    finite(event.latency_ms),
    finite(event.tokens_consumed),
  ];
}

interface Batch {
  rows: Row[];
  written: Promise<void>;
  resolve: () => void;
}

function newBatch(): Batch {
  let resolve = () => {};
  const written = new Promise<void>((done) => {
    resolve = done;
  });
  return { rows: [], written, resolve };
}

/** The audit log of a server tree on its configured backend (a SQLite file's folder is created 0700). */
export async function openAuditLogOn(
  backend: StoreBackend,
  paths: ServerPaths,
  options: AuditLogOptions = {},
): Promise<AuditLog> {
  if (backend.kind === "sqlite")
    mkdirSync(path.dirname(sqliteFileOf(paths, "audit")), { recursive: true, mode: 0o700 });
  return openAuditLog(await backend.open("audit"), options);
}

/** The audit log over `db` (migrated first); closing the log closes `db`. */
export async function openAuditLog(db: SqlDatabase, options: AuditLogOptions = {}): Promise<AuditLog> {
  const now = options.now ?? (() => new Date());
  const onWriteError =
    options.onWriteError ??
    ((error: Error, lost: number) =>
      createLogger().error("audit write failed", { error: error.message, lost }));
  try {
    await migrate(db, "audit", AUDIT_MIGRATIONS);
  } catch (error) {
    await db.close();
    throw error;
  }
  let pending: Batch | undefined;
  let scheduled: NodeJS.Timeout | undefined;
  /** The write loop, while one runs: it writes batch after batch until nothing is pending. */
  let writing: Promise<void> | undefined;
  /** Whether the pending batch is to be written now (a flush asked for it), not when its delay ends. */
  let due = false;
  let closing: Promise<void> | undefined;

  /** The INSERT of `count` rows (one text per count, so each backend prepares it once). */
  const inserts = new Map<number, string>();
  const insertOf = (count: number) => {
    let sql = inserts.get(count);
    if (!sql) {
      const values = Array.from(
        { length: count },
        (_, row) =>
          `(${Array.from({ length: WIDTH }, (_, column) => `$${row * WIDTH + column + 1}`).join(", ")})`,
      );
      sql = `INSERT INTO events (${COLUMNS}) VALUES ${values.join(", ")}`;
      inserts.set(count, sql);
    }
    return sql;
  };
  const insert = async (tx: SqlExecutor, rows: Row[]) => {
    // On PostgreSQL, replicas append one at a time: ids are then taken in commit order, so a reader paging
    // by id never skips a row that commits later with a smaller id.
    if (tx.dialect === "postgres")
      await tx.run("SELECT pg_advisory_xact_lock(hashtext('ivoai:audit-append'))");
    for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
      const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
      await tx.run(insertOf(chunk.length), chunk.flat());
    }
  };
  const write = async (batch: Batch) => {
    try {
      await db.transaction((tx) => insert(tx, batch.rows));
    } catch (error) {
      // Written after the call returned: the failure cannot fail the call any more, so it is reported.
      onWriteError(error instanceof Error ? error : new Error(String(error)), batch.rows.length);
    } finally {
      batch.resolve();
    }
  };
  const drain = async () => {
    try {
      while (pending && due) {
        const batch = pending;
        pending = undefined;
        due = false;
        if (scheduled) clearTimeout(scheduled);
        scheduled = undefined;
        await write(batch);
      }
    } finally {
      writing = undefined;
    }
  };
  const flush = (): Promise<void> => {
    if (scheduled) clearTimeout(scheduled);
    scheduled = undefined;
    // A batch due while a write is in flight is taken by that loop when the write ends.
    if (pending) due = true;
    if (due && !writing) writing = drain();
    return writing ?? Promise.resolve();
  };

  return {
    record(event) {
      // The time and the text are taken now: the event is as it was when it happened, whenever it is written.
      pending ??= newBatch();
      const batch = pending;
      batch.rows.push(rowOf(now().toISOString(), event));
      if (event.kind !== "tool_call" || batch.rows.length >= AUDIT_MAX_PENDING) void flush();
      // A commit per call would cost more than the call (a WAL append and its locks): calls share one.
      else scheduled ??= setTimeout(() => void flush(), AUDIT_MAX_DELAY_MS);
      return batch.written;
    },
    flush,
    async list(options) {
      await flush();
      const { sql, params } = listStatement(options, db.dialect);
      const rows = await db.all<{ id: number; at: string; body: string }>(sql, params);
      return rows
        .reverse()
        .map((row) => ({ ...(JSON.parse(row.body) as AuditEvent), id: Number(row.id), at: row.at }));
    },
    async lastUsed(credentialIds) {
      await flush();
      const result = new Map<string, string | null>();
      const ids = [...new Set(credentialIds)];
      for (let start = 0; start < ids.length; start += LAST_USED_CHUNK) {
        const chunk = ids.slice(start, start + LAST_USED_CHUNK);
        const arms = chunk.map((_, index) => lastUsedArm(index + 1));
        const rows = await db.all<{ credential_id: string; at: string | null }>(
          arms.join(" UNION ALL "),
          chunk,
        );
        for (const row of rows) result.set(row.credential_id, row.at ?? null);
      }
      return result;
    },
    async activity(query) {
      await flush();
      return aggregateActivity(db, query);
    },
    close() {
      closing ??= flush().then(() => db.close());
      return closing;
    },
  };
}
