// Claude Code's quota numbers exist only in the statusline payload of interactive sessions
// (`rate_limits.five_hour|seven_day.{used_percentage,resets_at}` for subscribers): parse them into snapshots
// and say them back as the one short status line Claude shows.
import type { QuotaSnapshot } from "../contracts.js";

const MAX_WINDOWS = 8;
const SHORT_NAMES: Record<string, string> = { five_hour: "5h", seven_day: "7d" };

/** The payload's rate-limit windows as snapshots (source "statusline"); [] when it has none or is malformed. */
export function parseStatuslinePayload(payload: unknown, observedAt: Date): QuotaSnapshot[] {
  const limits = record(record(payload)?.rate_limits);
  if (!limits) return [];
  const out: QuotaSnapshot[] = [];
  for (const [name, value] of Object.entries(limits).slice(0, MAX_WINDOWS)) {
    const window = record(value);
    if (!window || !/^[a-z0-9_]{1,40}$/.test(name)) continue;
    const used = window.used_percentage;
    if (typeof used !== "number" || !Number.isFinite(used)) continue;
    const usedPercent = Math.min(100, Math.max(0, used));
    out.push({
      executor: "claude",
      window: name,
      used_percent: usedPercent,
      status: usedPercent >= 100 ? "rejected" : null,
      resets_at: resetTime(window.resets_at),
      observed_at: observedAt.toISOString(),
      source: "statusline",
    });
  }
  return out;
}

/**
 * `resets_at` as ISO: Claude sends epoch seconds today; an ISO string, or epoch milliseconds, is accepted
 * too so that a format change does not lose the reset time.
 */
export function resetTime(value: unknown): string | null {
  let ms: number;
  if (typeof value === "number") ms = value > 1e12 ? value : value * 1000;
  else if (typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim())) return resetTime(Number(value));
  else if (typeof value === "string") ms = Date.parse(value);
  else return null;
  if (!Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isFinite(date.getTime()) ? date.toISOString() : null;
}

/** One short line for Claude's status bar, e.g. "ivoai · 5h 42% · 7d 10%". */
export function statusLineText(snapshots: readonly QuotaSnapshot[]): string {
  const parts = snapshots
    .filter((snapshot) => snapshot.used_percent !== null)
    .map(
      (snapshot) =>
        `${SHORT_NAMES[snapshot.window] ?? snapshot.window} ${Math.round(snapshot.used_percent ?? 0)}%`,
    );
  return ["ivoai", ...parts].join(" · ");
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
