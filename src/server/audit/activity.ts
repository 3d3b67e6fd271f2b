// The console's activity view: tool calls from the audit log in a time window, counted per bucket, tool,
// credential and session, with latency percentiles. One indexed range scan; percentiles need every latency.
import type Database from "better-sqlite3";
import type { Activity, ActivityBucket, ActivityFigures } from "../../protocol/console-api.js";

export const BUCKET_MS: Record<ActivityBucket, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** More buckets than this is a request for a chart nobody can read (and a large answer): refused. */
export const MAX_ACTIVITY_BUCKETS = 1_500;
/** Rows of each breakdown (by tool, credential, session). */
export const ACTIVITY_TOP = 50;
/** Statuses counted as errors: refused by the guardrail or failed (FAILED), refused before running (REJECTED). */
export const ERROR_STATUSES: ReadonlySet<string> = new Set(["FAILED", "REJECTED", "ERROR", "DENIED"]);

export interface ActivityQuery {
  since: Date;
  until: Date;
  bucket: ActivityBucket;
}

/** The first bucket's start: `since` floored to the bucket's unit (UTC), so buckets line up with the clock. */
export function firstBucketStart(since: Date, bucket: ActivityBucket): number {
  const unit = BUCKET_MS[bucket];
  return Math.floor(since.getTime() / unit) * unit;
}

/** How many buckets cover [since, until). */
export function bucketCount(query: ActivityQuery): number {
  const start = firstBucketStart(query.since, query.bucket);
  return Math.max(1, Math.ceil((query.until.getTime() - start) / BUCKET_MS[query.bucket]));
}

/** Nearest-rank percentile of ascending-sorted values (0 when there are none). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1] as number;
}

class Tally {
  calls = 0;
  errors = 0;
  tokens = 0;
  latencies: number[] = [];

  add(status: string, latency: number, tokens: number): void {
    this.calls += 1;
    if (ERROR_STATUSES.has(status)) this.errors += 1;
    this.tokens += tokens;
    this.latencies.push(latency);
  }

  figures(): ActivityFigures {
    const sorted = Float64Array.from(this.latencies).sort();
    return {
      calls: this.calls,
      errors: this.errors,
      p50_ms: percentile(sorted, 0.5),
      p95_ms: percentile(sorted, 0.95),
      tokens: this.tokens,
    };
  }
}

function top(groups: Map<string, Tally>): (ActivityFigures & { key: string })[] {
  return [...groups.entries()]
    .sort(([keyA, a], [keyB, b]) => b.calls - a.calls || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0))
    .slice(0, ACTIVITY_TOP)
    .map(([key, tally]) => ({ key, ...tally.figures() }));
}

function tallyOf(groups: Map<string, Tally>, key: string): Tally {
  let tally = groups.get(key);
  if (!tally) {
    tally = new Tally();
    groups.set(key, tally);
  }
  return tally;
}

type CallRow = [
  id: number,
  at: string,
  tool: string,
  credential: string,
  session: string | null,
  status: string,
  latency: number,
  tokens: number,
];

/** Rows read per statement; between chunks the event loop serves other requests. */
export const ACTIVITY_CHUNK = 5_000;

/**
 * Aggregates the tool calls recorded in [since, until); the caller bounds the bucket count. Read in keyset
 * chunks of (at, id) with a yield between them, so 100,000 calls never hold the server's event loop for long.
 */
export async function aggregateActivity(db: Database.Database, query: ActivityQuery): Promise<Activity> {
  const unit = BUCKET_MS[query.bucket];
  const start = firstBucketStart(query.since, query.bucket);
  const buckets = Array.from({ length: bucketCount(query) }, () => new Tally());
  const totals = new Tally();
  const byTool = new Map<string, Tally>();
  const byCredential = new Map<string, Tally>();
  const bySession = new Map<string, Tally>();
  // Times are stored as toISOString(), so the range compares as text on the `at` index (which holds the id).
  const chunk = db
    .prepare(
      `SELECT id, at, json_extract(body, '$.tool'), json_extract(body, '$.credential_id'),
        json_extract(body, '$.session_id'), json_extract(body, '$.status'),
        json_extract(body, '$.latency_ms'), json_extract(body, '$.tokens_consumed')
       FROM events WHERE at >= @from AND at < @until AND kind = 'tool_call' AND (at > @from OR id > @after_id)
       ORDER BY at, id LIMIT @limit`,
    )
    .raw();
  // Each chunk's index range starts at the last row read: (at, id) after it, never a rescan from `since`.
  let after = { at: query.since.toISOString(), id: 0 };
  for (;;) {
    const rows = chunk.all({
      from: after.at,
      until: query.until.toISOString(),
      after_id: after.id,
      limit: ACTIVITY_CHUNK,
    }) as CallRow[];
    for (const [, at, tool, credential, session, status, latency, tokens] of rows) {
      const latencyMs = Number(latency) || 0;
      const tokenCount = Number(tokens) || 0;
      totals.add(status, latencyMs, tokenCount);
      buckets[Math.floor((Date.parse(at) - start) / unit)]?.add(status, latencyMs, tokenCount);
      tallyOf(byTool, String(tool)).add(status, latencyMs, tokenCount);
      tallyOf(byCredential, String(credential)).add(status, latencyMs, tokenCount);
      // Calls without a session (no x-ivoai-session-id) are in every other figure, not in by_session.
      if (session) tallyOf(bySession, String(session)).add(status, latencyMs, tokenCount);
    }
    const last = rows.at(-1);
    if (!last || rows.length < ACTIVITY_CHUNK) break;
    after = { at: last[1], id: last[0] };
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return {
    since: query.since.toISOString(),
    until: query.until.toISOString(),
    bucket: query.bucket,
    totals: totals.figures(),
    series: buckets.map((tally, index) => ({
      start: new Date(start + index * unit).toISOString(),
      ...tally.figures(),
    })),
    by_tool: top(byTool),
    by_credential: top(byCredential),
    by_session: top(bySession),
  };
}
