// The audit log: every MCP tool call (guardrail outcome and telemetry) and every human decision, in SQLite.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Activity } from "../../protocol/console-api.js";
import type { SecurityTier, ToolStatus } from "../../protocol/tool-envelope.js";
import { createLogger } from "../../shared/logger.js";
import { openSqlite } from "../../shared/native-sqlite.js";
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

/** A person's or the system's decision: approvals, expiry, and revoking a client (`client_revoked`). */
export interface DecisionEvent {
  kind: "approval_decision" | "page_expired" | "approval_expired" | "client_revoked";
  actor: string;
  detail: Record<string, unknown>;
}

export type AuditEvent = ToolCallEvent | DecisionEvent;
export const AUDIT_KINDS = [
  "tool_call",
  "approval_decision",
  "approval_expired",
  "page_expired",
  "client_revoked",
] as const satisfies readonly AuditEvent["kind"][];
export type AuditRecord = AuditEvent & { id: number; at: string };

export interface AuditLog {
  /**
   * Records an event, off the caller's path: events are written together, in one transaction, at most
   * AUDIT_MAX_DELAY_MS after the first one still pending, or at once when AUDIT_MAX_PENDING are pending.
   * That is what a crash (the process killed, not stopped) can lose: the last AUDIT_MAX_DELAY_MS of events, at
   * most AUDIT_MAX_PENDING. Only tool calls wait: any other event (an approval decided, a client revoked, a
   * sign-in) is rare and is a record of a security decision, so it is written with what is pending at once.
   * `list`, `activity` and `close` write what is pending first, and the server closes the log on SIGTERM/SIGINT,
   * so a stop loses nothing.
   */
  record(event: AuditEvent): void;
  /** Writes pending events now. */
  flush(): void;
  list(options: { since?: string; limit?: number; kind?: AuditEvent["kind"] }): AuditRecord[];
  /** Tool calls in a window, aggregated (the console's activity view). */
  activity(query: ActivityQuery): Promise<Activity>;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at);
`;

/** Events held for one write at most: a burst this large is written at once. */
export const AUDIT_MAX_PENDING = 256;
/** How long the first pending event waits for others to share its transaction. */
export const AUDIT_MAX_DELAY_MS = 20;

export function openAuditLog(
  file: string,
  now: () => Date = () => new Date(),
  /** A write that failed, with how many events it lost (default: an error line of the standard logger). */
  onWriteError: (error: Error, lost: number) => void = (error, lost) =>
    createLogger().error("audit write failed", { error: error.message, lost }),
): AuditLog {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = openSqlite(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  const insert = db.prepare("INSERT INTO events (at, kind, body) VALUES (?, ?, ?)");
  let pending: [at: string, kind: string, body: string][] = [];
  let scheduled: NodeJS.Timeout | undefined;
  const writeAll = db.transaction((rows: typeof pending) => {
    for (const row of rows) insert.run(...row);
  });
  const flush = () => {
    if (scheduled) clearTimeout(scheduled);
    scheduled = undefined;
    if (pending.length === 0) return;
    const rows = pending;
    pending = [];
    try {
      writeAll(rows);
    } catch (error) {
      // Written after the call returned: the failure cannot fail the call any more, so it is reported.
      onWriteError(error instanceof Error ? error : new Error(String(error)), rows.length);
    }
  };
  return {
    record(event) {
      // The time and the text are taken now: the event is as it was when it happened, whenever it is written.
      pending.push([now().toISOString(), event.kind, JSON.stringify(event)]);
      if (event.kind !== "tool_call" || pending.length >= AUDIT_MAX_PENDING) flush();
      // A commit per call would cost more than the call (a WAL append and its locks): calls share one.
      else scheduled ??= setTimeout(flush, AUDIT_MAX_DELAY_MS);
    },
    flush,
    list({ since, limit, kind }) {
      flush();
      const rows = db
        .prepare(
          `SELECT id, at, body FROM events WHERE at >= ? ${kind ? "AND kind = ?" : ""} ORDER BY id DESC LIMIT ?`,
        )
        .all(...[since ?? "", ...(kind ? [kind] : []), Math.min(limit ?? 1000, 100_000)]) as {
        id: number;
        at: string;
        body: string;
      }[];
      return rows
        .reverse()
        .map((row) => ({ ...(JSON.parse(row.body) as AuditEvent), id: row.id, at: row.at }));
    },
    activity: (query) => {
      flush();
      return aggregateActivity(db, query);
    },
    close: () => {
      flush();
      db.close();
    },
  };
}
