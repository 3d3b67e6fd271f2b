// Approval requests and their decisions on the SQL layer (SQLite or PostgreSQL), with the rules that must hold
// whichever replica or CLI decides: a requester's pending cap, expiry, four eyes, and exactly-once apply (the
// change is applied in the transaction that marks the request applied, under a lock of the request's row).
import type {
  ApprovalAction,
  ApprovalPage,
  ApprovalRecord,
  ApprovalStatus,
  ApprovalSummary,
} from "../../protocol/approvals.js";
import { IvoaiError } from "../../shared/errors.js";
import {
  containsPattern,
  forUpdate,
  likeOperator,
  type SqlDatabase,
  type SqlExecutor,
} from "../store/sql.js";

export type { ApprovalAction, ApprovalPage, ApprovalRecord, ApprovalStatus, ApprovalSummary };

/** Characters of a summary shown in list views. */
export const LIST_SUMMARY_CHARS = 200;

export interface Decision {
  id: string;
  approve: boolean;
  actor: string;
  reason: string | null;
  at: string;
  /**
   * The credential deciding over HTTP (absent for the server operator's CLI): it may reject (withdraw) its own
   * request, never approve it (FORBIDDEN, data.error = self_approval).
   */
  credential?: string | undefined;
}

export type DecisionOutcome =
  | { outcome: "applied" | "rejected"; approval: ApprovalRecord }
  | { outcome: "conflict" | "expired" | "already_decided"; approval: ApprovalRecord; message: string };

/** Applies an approved request inside the deciding transaction: a conflict message, or undefined when applied. */
export type ApplyApproval = (tx: SqlExecutor, approval: ApprovalRecord) => Promise<string | undefined>;

export interface ApprovalStore {
  /**
   * Files a request unless its requester already has `maxPendingPerRequester` unexpired pending ones
   * (counted and inserted in one transaction, serialised per requester).
   */
  createApproval(
    record: ApprovalRecord,
    limits?: { maxPendingPerRequester?: number },
  ): Promise<"created" | "too_many_pending">;
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /** Newest first, one page at a time, filters combined with AND; a bad cursor is a USAGE error. */
  listApprovals(query: ApprovalListQuery): Promise<ApprovalPage>;
  /** Decides a pending request once; an approval runs `apply` in the same transaction. */
  decide(decision: Decision, apply: ApplyApproval): Promise<DecisionOutcome>;
  /** Marks pending requests past their expiry; returns their ids. */
  expireApprovals(now: string): Promise<string[]>;
  /** How many requests are in each status (one GROUP BY over the status index). */
  approvalCounts(): Promise<Record<ApprovalStatus, number>>;
}

/** A list's filters as the SQL sees them: `requesters` is any of these ids, `q` text in the summary or path. */
export interface ApprovalListQuery {
  status?: ApprovalStatus;
  limit: number;
  cursor?: string;
  requesters?: readonly string[];
  scope?: string;
  tool?: string;
  q?: string;
  /** created_at < before, created_at >= after (ISO times). */
  before?: string;
  after?: string;
}

type Row = Record<string, unknown>;

/** The list cursor: the (created_at, id) of the last row shown, opaque to callers. */
function encodeCursor(row: { created_at: string; id: string }): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString("base64url");
}

function decodeCursor(cursor: string): { created_at: string; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string") {
      return { created_at: value[0], id: value[1] };
    }
  } catch {
    // falls through to the usage error
  }
  throw new IvoaiError("USAGE", "invalid cursor: pass the next_cursor of the previous page unchanged");
}

function toApproval(row: Row): ApprovalRecord {
  return {
    ...(row as unknown as ApprovalRecord),
    base_version: Number(row.base_version),
    payload: JSON.parse(String(row.payload)),
  };
}

function toApprovalSummary(row: Row): ApprovalSummary {
  const summary = String(row.summary);
  return {
    ...(row as unknown as ApprovalSummary),
    summary: summary.length > LIST_SUMMARY_CHARS ? `${summary.slice(0, LIST_SUMMARY_CHARS)}…` : summary,
    diff_bytes: Number(row.diff_bytes),
    payload_bytes: Number(row.payload_bytes),
    requester_name: null,
  };
}

const COLUMNS =
  "id, created_at, expires_at, status, tool, action, scope, path, requester, session_id, summary, diff, payload, base_version, decided_by, decided_at, reason";

/** The store over a database whose memory migrations have run (the approvals table is part of them). */
export function createApprovalStore(db: SqlDatabase): ApprovalStore {
  return {
    createApproval: (record, limits) => insertApproval(db, record, limits),
    async getApproval(id) {
      const row = await db.get<Row>(`SELECT ${COLUMNS} FROM approvals WHERE id = $1`, [id]);
      return row ? toApproval(row) : undefined;
    },
    listApprovals: (query) => queryApprovals(db, query),
    decide: (decision, apply) => decideApproval(db, decision, apply),
    async expireApprovals(now) {
      const rows = await db.all<{ id: string }>(
        "UPDATE approvals SET status = 'expired', decided_at = $1, decided_by = 'system' WHERE status = 'pending' AND expires_at <= $1 RETURNING id",
        [now],
      );
      return rows.map((row) => row.id);
    },
    async approvalCounts() {
      const counts: Record<ApprovalStatus, number> = {
        pending: 0,
        applied: 0,
        rejected: 0,
        expired: 0,
        conflict: 0,
      };
      const rows = await db.all<{ status: ApprovalStatus; n: number }>(
        "SELECT status, COUNT(*) AS n FROM approvals GROUP BY status",
      );
      for (const row of rows) if (row.status in counts) counts[row.status] = Number(row.n);
      return counts;
    },
  };
}

/** Files a request, refusing one over the requester's pending limit (counted and inserted in one transaction). */
async function insertApproval(
  db: SqlDatabase,
  record: ApprovalRecord,
  limits?: { maxPendingPerRequester?: number },
): Promise<"created" | "too_many_pending"> {
  const maxPending = limits?.maxPendingPerRequester;
  return db.transaction(async (tx) => {
    if (maxPending !== undefined) {
      // Two replicas filing for one requester at once must not both pass the count (SQLite: serialised).
      if (tx.dialect === "postgres")
        await tx.get("SELECT pg_advisory_xact_lock(hashtext($1))", [`ivoai-approvals:${record.requester}`]);
      const row = await tx.get<{ n: number }>(
        "SELECT COUNT(*) AS n FROM approvals WHERE requester = $1 AND status = 'pending' AND expires_at > $2",
        [record.requester, record.created_at],
      );
      if (Number(row?.n ?? 0) >= maxPending) return "too_many_pending" as const;
    }
    await tx.run(
      `INSERT INTO approvals (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
      [
        record.id,
        record.created_at,
        record.expires_at,
        record.status,
        record.tool,
        record.action,
        record.scope,
        record.path,
        record.requester,
        record.session_id,
        record.summary,
        record.diff,
        JSON.stringify(record.payload),
        record.base_version,
        record.decided_by,
        record.decided_at,
        record.reason,
      ],
    );
    return "created" as const;
  });
}

/** One page of requests, newest first (keyset pagination). */
async function queryApprovals(db: SqlDatabase, query: ApprovalListQuery): Promise<ApprovalPage> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const params: unknown[] = [];
  const add = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  if (query.status !== undefined) where.push(`status = ${add(query.status)}`);
  if (query.requesters?.length) where.push(`requester IN (${query.requesters.map(add).join(", ")})`);
  if (query.scope !== undefined) where.push(`scope = ${add(query.scope)}`);
  if (query.tool !== undefined) where.push(`tool = ${add(query.tool)}`);
  if (query.q) {
    const pattern = add(containsPattern(query.q));
    const like = likeOperator(db.dialect);
    where.push(`(summary ${like} ${pattern} ESCAPE '\\' OR path ${like} ${pattern} ESCAPE '\\')`);
  }
  if (query.before !== undefined) where.push(`created_at < ${add(query.before)}`);
  if (query.after !== undefined) where.push(`created_at >= ${add(query.after)}`);
  if (after) {
    const created = add(after.created_at);
    where.push(`(created_at < ${created} OR (created_at = ${created} AND id < ${add(after.id)}))`);
  }
  // Keyset pagination, newest first; the columns exclude diff and payload, the summary is cut in SQL.
  // octet_length reads a value's size from its header without loading it (200 × 1 MiB: 2 ms, not 500 ms).
  const rows = await db.all<Row>(
    `SELECT id, status, tool, action, scope, path, requester, session_id,
         substr(summary, 1, ${LIST_SUMMARY_CHARS + 1}) AS summary, created_at, expires_at, decided_by, decided_at,
         octet_length(diff) AS diff_bytes, octet_length(payload) AS payload_bytes
       FROM approvals ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY created_at DESC, id DESC LIMIT ${add(query.limit + 1)}`,
    params,
  );
  const approvals = rows.slice(0, query.limit).map(toApprovalSummary);
  const last = approvals.at(-1);
  return { approvals, next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null };
}

/** Decides a pending request once, under its row lock; an approval applies it in the same transaction. */
async function decideApproval(
  db: SqlDatabase,
  decision: Decision,
  apply: ApplyApproval,
): Promise<DecisionOutcome> {
  return db.transaction(async (tx): Promise<DecisionOutcome> => {
    // The row lock makes a second decider (another replica, the CLI) wait here, then see the decision.
    const row = await tx.get<Row>(`SELECT ${COLUMNS} FROM approvals WHERE id = $1${forUpdate(tx.dialect)}`, [
      decision.id,
    ]);
    if (!row) throw new IvoaiError("NOT_FOUND", `no approval with id ${decision.id}`);
    const approval = toApproval(row);
    // Four eyes: a credential never approves its own request, whatever its state.
    if (decision.approve && decision.credential !== undefined && approval.requester === decision.credential)
      throw new IvoaiError(
        "FORBIDDEN",
        "a credential cannot approve its own request: another approver or the server operator must decide it",
        { data: { error: "self_approval" } },
      );
    const settle = async (status: ApprovalStatus, reason: string | null): Promise<ApprovalRecord> => {
      await tx.run(
        "UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, reason = $4 WHERE id = $5 AND status = 'pending'",
        [status, decision.actor, decision.at, reason, approval.id],
      );
      return { ...approval, status, decided_by: decision.actor, decided_at: decision.at, reason };
    };
    if (approval.status !== "pending") {
      return {
        outcome: "already_decided",
        approval,
        message: `approval ${approval.id} is already ${approval.status}`,
      };
    }
    if (approval.expires_at <= decision.at) {
      return {
        outcome: "expired",
        approval: await settle("expired", "expired before a decision"),
        message: "the request expired",
      };
    }
    if (!decision.approve)
      return { outcome: "rejected", approval: await settle("rejected", decision.reason) };
    const conflict = await apply(tx, approval);
    if (conflict !== undefined)
      return { outcome: "conflict", approval: await settle("conflict", conflict), message: conflict };
    return { outcome: "applied", approval: await settle("applied", decision.reason) };
  });
}
