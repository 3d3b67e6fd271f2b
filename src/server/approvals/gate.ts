// APPROVAL_GATE (seed 004): write-tier tool calls become pending requests; a person approves or rejects them,
// and an approved change is applied exactly once, or fails with a conflict if the page moved on.
import type { ApprovalDetail, ApprovalRequestField, BulkDecisionResult } from "../../protocol/approvals.js";
import { IvoaiError } from "../../shared/errors.js";
import { newId } from "../../shared/tokens.js";
import type { AuditLog } from "../audit/store.js";
import { type PageInput, preparePageWrite } from "../memory/page-write.js";
import { writerSession } from "../memory/session-term.js";
import type {
  ApprovalPage,
  ApprovalRecord,
  ApprovalStatus,
  DecisionOutcome,
  MemoryStore,
} from "../memory/store.js";
import { describeChanges } from "./describe.js";

export const DEFAULT_APPROVAL_TTL_MS = 7 * 86_400_000;
export const DEFAULT_MAX_PENDING_PER_CLIENT = 50;
export const DEFAULT_APPROVAL_PAGE = 50;
export const MAX_APPROVAL_PAGE = 200;

/** Credential id → the name a person knows it by (enrolled and Web MCP clients). */
export type CredentialNames = ReadonlyMap<string, string>;

/** Filters of an approvals list, all optional and combined with AND. */
export interface ApprovalListFilter {
  status?: ApprovalStatus | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
  /** A credential id or a name one of them carries. */
  requester?: string | undefined;
  scope?: string | undefined;
  tool?: string | undefined;
  /** Case-insensitive text in the summary or the path. */
  q?: string | undefined;
  /** created_at bounds (ISO): before is exclusive, after inclusive. */
  before?: string | undefined;
  after?: string | undefined;
}

/** What a write-tier tool proposes: an approval request before the gate gives it an id, times and a status. */
export type Proposal = Pick<ApprovalRecord, ApprovalRequestField | "diff" | "payload" | "base_version">;

export interface ApprovalGate {
  propose(proposal: Proposal): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** The request with its requester's name and what it changes, field by field (describe.ts). */
  detail(id: string, names?: CredentialNames): Promise<ApprovalDetail | undefined>;
  /** One page of request summaries (no bodies or diffs), newest first, with requester names. */
  list(query?: ApprovalListFilter, names?: CredentialNames): Promise<ApprovalPage>;
  /**
   * Decides a request once. `deciderCredential` is the credential deciding over HTTP (absent for the server
   * operator's CLI): it may reject (withdraw) its own request, never approve it (FORBIDDEN).
   */
  decide(
    id: string,
    approve: boolean,
    actor: string,
    reason?: string,
    deciderCredential?: string,
  ): Promise<DecisionOutcome>;
  /**
   * Decides many requests, one after another, each exactly as `decide` would: one outcome per distinct id, in
   * the order given (an id twice is decided once). One that is missing, forbidden or fails does not stop the
   * rest: it gets its own outcome (`not_found`, `forbidden`, `error`).
   */
  decideMany(
    ids: readonly string[],
    approve: boolean,
    actor: string,
    reason?: string,
    deciderCredential?: string,
  ): Promise<BulkDecisionResult[]>;
  /** Marks pending requests past their expiry; returns their ids. */
  expire(): Promise<string[]>;
  /** How many requests are in each status. */
  counts(): Promise<Record<ApprovalStatus, number>>;
}

export interface ApprovalGateDeps {
  /** The approvals, and the memory pages an approved change is applied to (one database, one transaction). */
  store: Pick<
    MemoryStore,
    | "createApproval"
    | "getApproval"
    | "listApprovals"
    | "decide"
    | "expireApprovals"
    | "approvalCounts"
    | "pageVersion"
    | "getPage"
  >;
  audit?: AuditLog;
  ttlMs?: number;
  /** Unexpired pending requests one requester may have at once. */
  maxPendingPerClient?: number;
  now?: () => Date;
}

export function createApprovalGate(deps: ApprovalGateDeps): ApprovalGate {
  const now = deps.now ?? (() => new Date());
  const ttlMs = deps.ttlMs ?? DEFAULT_APPROVAL_TTL_MS;
  const maxPending = deps.maxPendingPerClient ?? DEFAULT_MAX_PENDING_PER_CLIENT;
  return {
    async propose(proposal) {
      const at = now();
      const record: ApprovalRecord = {
        ...proposal,
        id: newId("apr_"),
        created_at: at.toISOString(),
        expires_at: new Date(at.getTime() + ttlMs).toISOString(),
        status: "pending",
        decided_by: null,
        decided_at: null,
        reason: null,
      };
      const filed = await deps.store.createApproval(record, { maxPendingPerRequester: maxPending });
      if (filed === "too_many_pending") {
        throw new IvoaiError(
          "CONFLICT",
          `too many pending approval requests: this credential already has ${maxPending} waiting for a person; ` +
            "wait until some are decided or expire (memory_approval_status tells their state)",
          { data: { limit: maxPending } },
        );
      }
      return record;
    },
    get: (id) => deps.store.getApproval(id),
    async detail(id, names = new Map()) {
      const approval = await deps.store.getApproval(id);
      if (!approval) return undefined;
      const [base, current] = await Promise.all([
        approval.base_version > 0
          ? deps.store.pageVersion(approval.scope, approval.path, approval.base_version)
          : undefined,
        deps.store.getPage(approval.scope, approval.path),
      ]);
      const changes = describeChanges({
        approval,
        base: base ?? null,
        currentVersion: current?.version ?? 0,
        now: now(),
      });
      return { ...approval, requester_name: names.get(approval.requester) ?? null, changes };
    },
    async list(query = {}, names = new Map()) {
      const limit = query.limit ?? DEFAULT_APPROVAL_PAGE;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_APPROVAL_PAGE) {
        throw new IvoaiError("USAGE", `limit must be an integer from 1 to ${MAX_APPROVAL_PAGE}`);
      }
      const { requester, ...rest } = query;
      const requesters = requester === undefined ? undefined : requesterIds(requester, names);
      const page = await deps.store.listApprovals({
        ...definedOnly(rest),
        limit,
        ...(requesters ? { requesters } : {}),
      });
      for (const row of page.approvals) row.requester_name = names.get(row.requester) ?? null;
      return page;
    },
    async decideMany(ids, approve, actor, reason, deciderCredential) {
      const results: BulkDecisionResult[] = [];
      for (const id of new Set(ids)) {
        try {
          const outcome = await this.decide(id, approve, actor, reason, deciderCredential);
          results.push({
            id,
            outcome: outcome.outcome,
            ...("message" in outcome ? { message: outcome.message } : {}),
          });
        } catch (error) {
          // Whatever fails, the caller learns which requests were decided before and after it.
          const code = error instanceof IvoaiError ? error.code : undefined;
          results.push({
            id,
            outcome: code === "NOT_FOUND" ? "not_found" : code === "FORBIDDEN" ? "forbidden" : "error",
            message: error instanceof Error ? error.message : String(error),
          });
        }
      }
      return results;
    },
    async decide(id, approve, actor, reason, deciderCredential) {
      if (!actor.trim()) throw new IvoaiError("USAGE", "a decision needs the approver's name");
      // Four eyes (a credential never approves its own request) is checked by the store, in the decision.
      const outcome = await deps.store.decide(
        {
          id,
          approve,
          actor,
          reason: reason ?? null,
          at: now().toISOString(),
          ...(deciderCredential !== undefined ? { credential: deciderCredential } : {}),
        },
        // Re-derived from the stored request at apply time, so the applied write is exactly what was shown.
        (approval) =>
          approval.action === "write_page" ? preparePageWrite(appliedInput(approval)) : undefined,
      );
      if (outcome.outcome !== "already_decided") {
        await deps.audit?.record({
          kind: "approval_decision",
          actor,
          detail: {
            approval_id: id,
            outcome: outcome.outcome,
            tool: outcome.approval.tool,
            scope: outcome.approval.scope,
            path: outcome.approval.path,
            requester: outcome.approval.requester,
            reason: reason ?? null,
          },
        });
      }
      return outcome;
    },
    counts: () => deps.store.approvalCounts(),
    async expire() {
      const ids = await deps.store.expireApprovals(now().toISOString());
      for (const id of ids)
        await deps.audit?.record({ kind: "approval_expired", actor: "system", detail: { approval_id: id } });
      return ids;
    },
  };
}

/**
 * The page an approved request writes: its stored input, whose session is the proposer's (a request filed before
 * inputs carried it gets it from the request's requester and session id).
 */
export function appliedInput(approval: ApprovalRecord): PageInput {
  const input = approval.payload as unknown as PageInput;
  if (input.session !== undefined || !approval.session_id) return input;
  return { ...input, session: writerSession(approval.requester, approval.session_id) };
}

/** The fields of `value` that are set (exactOptionalPropertyTypes: undefined is not "absent"). */
function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/**
 * The credential ids a requester filter means: the text as an id, and the one credential carrying it as a name.
 * A name two credentials carry is refused: Web MCP clients name themselves when they register, so a name alone
 * must never gather another client's requests into a list a person may approve in bulk.
 */
function requesterIds(requester: string, names: CredentialNames): string[] {
  const named = [...names].filter(([, name]) => name === requester).map(([id]) => id);
  if (named.length > 1)
    throw new IvoaiError(
      "USAGE",
      `requester name '${requester}' is carried by ${named.length} credentials (${named.join(", ")}): filter by one id`,
    );
  return [requester, ...named];
}
