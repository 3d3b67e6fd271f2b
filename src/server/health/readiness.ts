// /ready: critical dependencies decide ready vs 503; a failing optional one makes the server ready_degraded.
import { withTimeout } from "../../shared/timeout.js";

export interface ReadinessCheck {
  name: string;
  /** A failing critical check makes the server not ready; a failing optional one degrades it. */
  critical: boolean;
  check(): Promise<void>;
}

export interface ReadinessReport {
  status: "ready" | "ready_degraded" | "not_ready";
  degraded: string[];
  failed: string[];
  checks: { name: string; ok: boolean; critical: boolean; error?: string }[];
}

export async function evaluateReadiness(
  checks: readonly ReadinessCheck[],
  timeoutMs = 2_000,
): Promise<ReadinessReport> {
  const results = await Promise.all(
    checks.map(async (entry) => {
      try {
        await withTimeout(entry.check(), timeoutMs);
        return { name: entry.name, ok: true, critical: entry.critical };
      } catch (error) {
        return { name: entry.name, ok: false, critical: entry.critical, error: describe(error) };
      }
    }),
  );
  const failed = results.filter((r) => !r.ok && r.critical).map((r) => r.name);
  const degraded = results.filter((r) => !r.ok && !r.critical).map((r) => r.name);
  const status = failed.length > 0 ? "not_ready" : degraded.length > 0 ? "ready_degraded" : "ready";
  return { status, degraded, failed, checks: results };
}

function describe(error: unknown): string {
  // Only the first line: readiness is public and must not leak paths of the host beyond what ops need.
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "failed";
}
