// The approvals view's URL search params (status and filters) and the list query they make: a filtered queue
// is a link that can be shared, and back/forward walk through it.
import type { ApprovalListQuery, ApprovalStatusName } from "../types.js";

export const STATUSES: ApprovalStatusName[] = ["pending", "applied", "rejected", "expired", "conflict"];

/** "Older than …" choices: sent as `before` = now minus the age. */
export const AGES = { "1h": 3_600_000, "1d": 86_400_000, "7d": 7 * 86_400_000 } as const;
export type AgeName = keyof typeof AGES;
export const AGE_LABEL: Record<AgeName, string> = { "1h": "1 hour", "1d": "1 day", "7d": "7 days" };

/** Tools whose calls wait for approval. */
export const GATED_TOOLS = ["memory_write_page", "memory_delete_page", "memory_feedback"] as const;

export interface ApprovalSearch {
  status?: ApprovalStatusName | undefined;
  requester?: string | undefined;
  scope?: string | undefined;
  tool?: string | undefined;
  q?: string | undefined;
  age?: AgeName | undefined;
}

export const TEXT_FILTERS = ["requester", "scope", "tool", "q"] as const;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim().length > 0 ? value.trim() : undefined;
}

/** The route's validateSearch: unknown or empty values are dropped, so a hand-edited URL still works. */
export function validateApprovalSearch(search: Record<string, unknown>): ApprovalSearch {
  const out: ApprovalSearch = {};
  const status = text(search.status);
  if (status && (STATUSES as string[]).includes(status) && status !== "pending")
    out.status = status as ApprovalStatusName;
  for (const key of TEXT_FILTERS) {
    const value = text(search[key]);
    if (value) out[key] = value;
  }
  const age = text(search.age);
  if (age && age in AGES) out.age = age as AgeName;
  return out;
}

/** The GET /v1/approvals query for one page of this search (`now` fixes "older than"). */
export function listQuery(search: ApprovalSearch, now: number): ApprovalListQuery {
  const out: ApprovalListQuery = { status: search.status ?? "pending" };
  for (const key of TEXT_FILTERS) {
    const value = search[key];
    if (value) out[key] = value;
  }
  if (search.age) out.before = new Date(now - AGES[search.age]).toISOString();
  return out;
}

/** "requester “Bea”, tool memory_write_page, older than 1 day" — what the list is narrowed to, or "". */
export function describeFilters(search: ApprovalSearch): string {
  const parts: string[] = [];
  if (search.requester) parts.push(`requester “${search.requester}”`);
  if (search.scope) parts.push(`scope “${search.scope}”`);
  if (search.tool) parts.push(`tool ${search.tool}`);
  if (search.q) parts.push(`text “${search.q}”`);
  if (search.age) parts.push(`older than ${AGE_LABEL[search.age]}`);
  return parts.join(", ");
}
