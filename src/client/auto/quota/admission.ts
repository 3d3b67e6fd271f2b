// Admission of the primary and of every worker against the vendors' quota windows with configurable headroom,
// and — kept apart, because it is not quota — the pressure a conversation puts on its model's context window.
import { IvoaiError } from "../../../shared/errors.js";
import type { Admission, ExecutorName, QuotaSnapshot, TokenUsage } from "../contracts.js";
import { probeCodexAppServer } from "./codex-app-server.js";
import { openQuotaStore } from "./store.js";

export const DEFAULT_HEADROOM_PERCENT = 10;

export interface QuotaManagerOptions {
  stateDir: string;
  /** Refuse a window once its usage reaches 100 − headroom percent (default 10). */
  headroomPercent?: number;
  now?: () => Date;
  /** Told when the store file was corrupt and is replaced. */
  onProblem?: (message: string) => void;
}

export interface QuotaRefresh {
  /** What is stored for the executor after the refresh. */
  snapshots: QuotaSnapshot[];
  /** codex: from the app-server's rate-limit read; claude: "unknown" (nothing to probe). */
  account: "logged_in" | "logged_out" | "unknown";
  /** One line each, e.g. "codex is not logged in". */
  problems: string[];
}

export interface QuotaManager {
  readonly headroomPercent: number;
  /** Records snapshots from any source (stream events, turn errors, the statusline). */
  observe(snapshots: readonly QuotaSnapshot[]): Promise<QuotaSnapshot[]>;
  /** The stored snapshots of one executor, most recent first. */
  current(executor: ExecutorName): Promise<QuotaSnapshot[]>;
  /** May a new turn start on this executor now? */
  admit(executor: ExecutorName): Promise<Admission>;
  /**
   * Re-probes and records: codex through `<cliPath> app-server`; claude has nothing to probe (its numbers come
   * from the statusline and the stream), so the stored snapshots are returned.
   */
  refresh(executor: ExecutorName, cliPath: string, env: NodeJS.ProcessEnv): Promise<QuotaRefresh>;
}

export function createQuotaManager(options: QuotaManagerOptions): QuotaManager {
  const headroomPercent = options.headroomPercent ?? DEFAULT_HEADROOM_PERCENT;
  if (!Number.isFinite(headroomPercent) || headroomPercent < 0 || headroomPercent >= 100)
    throw new IvoaiError(
      "USAGE",
      `quota headroom must be at least 0 and below 100 percent, not ${headroomPercent}`,
    );
  const now = options.now ?? (() => new Date());
  const store = openQuotaStore({
    stateDir: options.stateDir,
    ...(options.onProblem ? { onProblem: options.onProblem } : {}),
  });
  return {
    headroomPercent,
    observe: (snapshots) => store.observe(snapshots),
    current: (executor) => store.read(executor),
    async admit(executor) {
      return admitSnapshots(executor, await store.read(executor), { headroomPercent, now: now() });
    },
    async refresh(executor, cliPath, env) {
      if (executor === "claude")
        return { snapshots: await store.read("claude"), account: "unknown", problems: [] };
      const probe = await probeCodexAppServer({ cliPath, env, models: false, now });
      const stored = probe.snapshots.length > 0 ? await store.observe(probe.snapshots) : await store.read();
      return {
        snapshots: stored.filter((snapshot) => snapshot.executor === "codex"),
        account: probe.account,
        problems: probe.problems,
      };
    },
  };
}

/**
 * Pure admission rule: refused when a window's usage is at or above 100 − headroom, or the vendor said
 * "rejected" — unless that window's reset time has passed. No snapshot at all admits ("no quota data").
 */
/** How long a snapshot without a reset time still decides admission. */
export const UNKNOWN_RESET_TRUST_MS = 15 * 60_000;

export function admitSnapshots(
  executor: ExecutorName,
  snapshots: readonly QuotaSnapshot[],
  rule: { headroomPercent: number; now: Date },
): Admission {
  const own = snapshots.filter((snapshot) => snapshot.executor === executor);
  if (own.length === 0) return { admitted: true, reason: "no quota data" };
  const limit = 100 - rule.headroomPercent;
  for (const snapshot of own) {
    const reset = snapshot.resets_at === null ? Number.NaN : Date.parse(snapshot.resets_at);
    if (Number.isFinite(reset) && reset <= rule.now.getTime()) continue;
    // A limit without a reset time (Claude's stream may omit it) is trusted for a while, not forever:
    // nothing probes Claude between sessions, so a stale "rejected" would otherwise block it for good.
    if (
      !Number.isFinite(reset) &&
      rule.now.getTime() - Date.parse(snapshot.observed_at) > UNKNOWN_RESET_TRUST_MS
    )
      continue;
    const until = snapshot.resets_at ? `until ${snapshot.resets_at}` : "reset time unknown";
    const used = snapshot.used_percent;
    if (used !== null && used >= limit)
      return {
        admitted: false,
        reason: `${executor} ${snapshot.window} window at ${round(used)}% (headroom ${rule.headroomPercent}%) ${until}`,
      };
    if (snapshot.status === "rejected")
      return {
        admitted: false,
        reason: `${executor} ${snapshot.window} window rejected by ${executor}${used === null ? "" : ` at ${round(used)}%`} (headroom ${rule.headroomPercent}%) ${until}`,
      };
  }
  const windows = own
    .map(
      (snapshot) =>
        `${snapshot.window} ${snapshot.used_percent === null ? snapshot.status : `${round(snapshot.used_percent)}%`}`,
    )
    .join(", ");
  return {
    admitted: true,
    reason: `${executor} within quota: ${windows} (headroom ${rule.headroomPercent}%)`,
  };
}

const round = (value: number) => Math.round(value * 10) / 10;

// ---------------------------------------------------------------------------------------------------------
// Context-window pressure: not quota (a full context asks for compaction or a fresh thread, not failover).

export const CONTEXT_HIGH_RATIO = 0.8;
export const CONTEXT_FULL_RATIO = 0.95;

export interface ContextPressure {
  /** contextTokens / contextWindow, 0 when unknown. */
  ratio: number;
  /** "high" from 0.8, "full" from 0.95. */
  level: "ok" | "high" | "full";
  /** false when the turn did not report how much context it occupies. */
  known: boolean;
}

export function contextPressure(usage: TokenUsage | null, contextWindow: number): ContextPressure {
  const tokens = usage?.contextTokens ?? null;
  if (tokens === null || !(contextWindow > 0)) return { ratio: 0, level: "ok", known: false };
  const ratio = Math.max(0, tokens / contextWindow);
  return {
    ratio,
    level: ratio >= CONTEXT_FULL_RATIO ? "full" : ratio >= CONTEXT_HIGH_RATIO ? "high" : "ok",
    known: true,
  };
}
