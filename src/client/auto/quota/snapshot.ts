// Checks a quota snapshot read from disk or handed in by an executor. Hand-written, not zod: the status-line
// hook runs on every refresh of Claude's status line and must not load a schema library to check 7 fields.
import { EXECUTORS, QUOTA_SOURCES, QUOTA_STATUSES, type QuotaSnapshot } from "../contracts.js";

const MAX_WINDOW = 40;

function oneOf<T extends string>(value: unknown, allowed: readonly T[]): value is T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value);
}

const nullableString = (value: unknown) => value === null || typeof value === "string";

/** The snapshot with exactly its known fields; throws an Error naming the first bad field. */
export function parseQuotaSnapshot(value: unknown): QuotaSnapshot {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error("a quota snapshot must be an object");
  const record = value as Record<string, unknown>;
  const bad = (field: string) => new Error(`quota snapshot: invalid ${field}`);
  const { executor, window, used_percent, status, resets_at, observed_at, source } = record;
  if (!oneOf(executor, EXECUTORS)) throw bad("executor");
  if (typeof window !== "string" || window.length > MAX_WINDOW) throw bad("window");
  if (
    used_percent !== null &&
    (typeof used_percent !== "number" || !(used_percent >= 0 && used_percent <= 100))
  )
    throw bad("used_percent");
  if (status !== null && !oneOf(status, QUOTA_STATUSES)) throw bad("status");
  if (!nullableString(resets_at)) throw bad("resets_at");
  if (typeof observed_at !== "string") throw bad("observed_at");
  if (!oneOf(source, QUOTA_SOURCES)) throw bad("source");
  return {
    executor,
    window,
    used_percent: used_percent as number | null,
    status,
    resets_at: resets_at as string | null,
    observed_at,
    source,
  };
}
