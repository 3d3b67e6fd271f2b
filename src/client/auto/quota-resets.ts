// When a session stopped by quota (exit 75) can run again: for each executor admission refuses, the time its
// refusing windows reset, so the stop message and the --json output say when to retry instead of only "no".
import type { ExecutorName, QuotaSnapshot } from "./contracts.js";
import { admitSnapshots, type QuotaManager } from "./quota/admission.js";

/** One executor at its limit: when it is admitted again (null when a refusing window gave no reset time). */
export interface QuotaReset {
  executor: ExecutorName;
  /** ISO time the last of its refusing windows resets, or null when one of them did not say. */
  resets_at: string | null;
  /** Admission's own words for the refusal. */
  reason: string;
}

/**
 * The reset of one executor from its stored snapshots under the admission rule, or null when it is admitted.
 * Every window that refuses on its own must have reset before admission says yes, so the latest one counts.
 */
export function quotaResetOf(
  executor: ExecutorName,
  snapshots: readonly QuotaSnapshot[],
  rule: { headroomPercent: number; now: Date },
): QuotaReset | null {
  const admission = admitSnapshots(executor, snapshots, rule);
  if (admission.admitted) return null;
  const refusing = snapshots.filter(
    (snapshot) => snapshot.executor === executor && !admitSnapshots(executor, [snapshot], rule).admitted,
  );
  const times = refusing.map((snapshot) =>
    snapshot.resets_at ? Date.parse(snapshot.resets_at) : Number.NaN,
  );
  const known = times.length > 0 && times.every(Number.isFinite);
  return {
    executor,
    resets_at: known ? new Date(Math.max(...times)).toISOString() : null,
    reason: admission.reason,
  };
}

/** The resets of every executor in `executors` that quota refuses now, from the manager's store. */
export async function quotaResets(
  quota: QuotaManager,
  executors: readonly ExecutorName[],
  now: Date,
): Promise<QuotaReset[]> {
  const resets: QuotaReset[] = [];
  for (const executor of executors) {
    const reset = quotaResetOf(executor, await quota.current(executor), {
      headroomPercent: quota.headroomPercent,
      now,
    });
    if (reset) resets.push(reset);
  }
  return resets;
}

/** "codex resets at 2026-12-03T21:00:00.000Z (in 2h 10m); claude: reset time unknown", or "" for none. */
export function describeQuotaResets(resets: readonly QuotaReset[], now: Date): string {
  return resets
    .map((reset) =>
      reset.resets_at
        ? `${reset.executor} resets at ${reset.resets_at} (${untilText(Date.parse(reset.resets_at) - now.getTime())})`
        : `${reset.executor}: reset time unknown`,
    )
    .join("; ");
}

/** "in 2h 10m", "in 5m", "in under a minute" (whole minutes, rounded down). */
export function untilText(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "in under a minute";
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (days > 0) return `in ${days}d ${hours % 24}h`;
  return hours > 0 ? `in ${hours}h ${minutes % 60}m` : `in ${minutes}m`;
}
