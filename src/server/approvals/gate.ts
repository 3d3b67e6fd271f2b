// APPROVAL_GATE (seed 004): write-tier tool calls become pending requests; a person approves or rejects them,
// and an approved change is applied exactly once, or fails with a conflict if the page moved on.
import type { ApprovalRequestField } from "../../protocol/approvals.js";
import { IvoaiError } from "../../shared/errors.js";
import { newId } from "../../shared/tokens.js";
import type { AuditLog } from "../audit/store.js";
import { type PageInput, preparePageWrite } from "../memory/page-write.js";
import type {
  ApprovalPage,
  ApprovalRecord,
  ApprovalStatus,
  DecisionOutcome,
  MemoryStore,
} from "../memory/store.js";

export const DEFAULT_APPROVAL_TTL_MS = 7 * 86_400_000;
export const DEFAULT_MAX_PENDING_PER_CLIENT = 50;
export const DEFAULT_APPROVAL_PAGE = 50;
export const MAX_APPROVAL_PAGE = 200;

/** What a write-tier tool proposes: an approval request before the gate gives it an id, times and a status. */
export type Proposal = Pick<ApprovalRecord, ApprovalRequestField | "diff" | "payload" | "base_version">;

export interface ApprovalGate {
  propose(proposal: Proposal): Promise<ApprovalRecord>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  /** One page of request summaries (no bodies or diffs), newest first. */
  list(query?: {
    status?: ApprovalStatus | undefined;
    limit?: number | undefined;
    cursor?: string | undefined;
  }): Promise<ApprovalPage>;
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
  /** Marks pending requests past their expiry; returns their ids. */
  expire(): Promise<string[]>;
  /** How many requests are in each status. */
  counts(): Promise<Record<ApprovalStatus, number>>;
}

export interface ApprovalGateDeps {
  /** The approvals, and the memory pages an approved change is applied to (one database, one transaction). */
  store: Pick<
    MemoryStore,
    "createApproval" | "getApproval" | "listApprovals" | "decide" | "expireApprovals" | "approvalCounts"
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
    async list(query = {}) {
      const limit = query.limit ?? DEFAULT_APPROVAL_PAGE;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_APPROVAL_PAGE) {
        throw new IvoaiError("USAGE", `limit must be an integer from 1 to ${MAX_APPROVAL_PAGE}`);
      }
      return deps.store.listApprovals({
        limit,
        ...(query.status ? { status: query.status } : {}),
        ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      });
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
          approval.action === "write_page"
            ? preparePageWrite(approval.payload as unknown as PageInput)
            : undefined,
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
