// Executor names and the quota snapshot, with its check for what is read from disk or handed in by an executor.
// No zod here, nor any import that loads it: the status-line hook runs on every refresh of Claude's status line
// and must not load a schema library to check 7 fields (test/cli-start.e2e.test.ts records what it loads).

export const EXECUTORS = ["codex", "claude"] as const;
export type ExecutorName = (typeof EXECUTORS)[number];
export const QUOTA_STATUSES = ["allowed", "warning", "rejected"] as const;
export const QUOTA_SOURCES = ["app-server", "statusline", "stream", "turn-error"] as const;

/** One observation of an executor's usage window. */
export interface QuotaSnapshot {
  executor: ExecutorName;
  /** "primary"/"secondary" (codex), "five_hour"/"seven_day"/… (claude); at most 40 characters. */
  window: string;
  /** 0–100; null when the source reports only a status (claude's stream). */
  used_percent: number | null;
  /** "allowed" | "warning" | "rejected" when the source says so. */
  status: (typeof QUOTA_STATUSES)[number] | null;
  resets_at: string | null;
  observed_at: string;
  source: (typeof QUOTA_SOURCES)[number];
}

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
