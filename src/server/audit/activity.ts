// The console's activity view: tool calls from the audit log in a time window, counted per bucket, tool,
// credential and session, with latency percentiles. One indexed range scan in bounded memory: latencies go
// into sparse histograms, and each breakdown keeps a bounded number of keys (agents choose session ids).
import type { Activity, ActivityBucket, ActivityFigures } from "../../protocol/console-api.js";
import type { SqlExecutor } from "../store/sql.js";

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

// Latency bins: 0.1 ms wide below 100 ms, then each 1 % wider than the one before (about 230 bins per decade
// above 100 ms: 2,400 bins up to a day). A percentile is the bin holding the nearest-rank value, reported as the
// bin's start below 100 ms (exact for latencies on a 0.1 ms grid, such as the whole milliseconds recorded;
// else at most 0.1 ms low) and as the bin's geometric middle above it (at most 0.5 % off, plus 0.05 ms of
// rounding to 0.1 ms).
const LINEAR_LIMIT_MS = 100;
const LINEAR_BINS = 1_000;
const LOG_GROWTH = 1.01;
const LOG_OF_GROWTH = Math.log(LOG_GROWTH);
/** Latencies above this (about 30 years, or Infinity) count as this. */
const MAX_LATENCY_MS = 1e12;

/** The histogram bin of a latency in ms (negative or not a number: 0 ms). */
export function latencyBin(ms: number): number {
  if (!(ms > 0)) return 0;
  // The epsilon keeps whole tenths whole: 2.3 * 10 is 22.999999999999996.
  if (ms < LINEAR_LIMIT_MS) return Math.floor(ms * 10 + 1e-9);
  const ratio = Math.min(ms, MAX_LATENCY_MS) / LINEAR_LIMIT_MS;
  return LINEAR_BINS + Math.floor(Math.log(ratio) / LOG_OF_GROWTH + 1e-9);
}

/** The latency a bin reports (see the error bounds above). */
export function binLatency(bin: number): number {
  if (bin < LINEAR_BINS) return bin / 10;
  const middle = LINEAR_LIMIT_MS * LOG_GROWTH ** (bin - LINEAR_BINS + 0.5);
  return Math.round(middle * 10) / 10;
}

/** Bins a histogram lists one by one (cheaper while few) before it counts them in a map. */
const LISTED_BINS = 128;

/** Latencies as a sparse histogram: bin → count, at most a few thousand entries whatever the call count. */
export class LatencyHistogram {
  private listed: number[] = [];
  /** Created once the list is full. */
  private bins: Map<number, number> | undefined;
  count = 0;

  add(ms: number): void {
    this.addToBin(latencyBin(ms));
  }

  /** Counts a latency already binned (one `latencyBin` per call, however many histograms it goes into). */
  addToBin(bin: number): void {
    this.count += 1;
    if (this.bins) {
      this.bins.set(bin, (this.bins.get(bin) ?? 0) + 1);
      return;
    }
    this.listed.push(bin);
    if (this.listed.length <= LISTED_BINS) return;
    const bins = new Map<number, number>();
    for (const listed of this.listed) bins.set(listed, (bins.get(listed) ?? 0) + 1);
    this.bins = bins;
    this.listed = [];
  }

  /** Nearest-rank percentiles (p in (0, 1], ascending) read in one pass over the sorted bins; 0 when empty. */
  percentiles(ps: readonly number[]): number[] {
    if (this.count === 0) return ps.map(() => 0);
    if (!this.bins) {
      const sorted = Int32Array.from(this.listed).sort();
      return ps.map((p) => binLatency(percentile(sorted, p)));
    }
    const sorted = [...this.bins.entries()].sort(([a], [b]) => a - b);
    const results: number[] = [];
    let seen = 0;
    let index = 0;
    for (const p of ps) {
      const rank = Math.max(1, Math.ceil(p * this.count));
      while (index < sorted.length - 1 && seen + (sorted[index]?.[1] ?? 0) < rank) {
        seen += sorted[index]?.[1] ?? 0;
        index += 1;
      }
      results.push(binLatency(sorted[index]?.[0] ?? 0));
    }
    return results;
  }
}

class Tally {
  calls = 0;
  errors = 0;
  tokens = 0;
  readonly latencies = new LatencyHistogram();

  add(error: boolean, latencyBin: number, tokens: number): void {
    this.calls += 1;
    if (error) this.errors += 1;
    this.tokens += tokens;
    this.latencies.addToBin(latencyBin);
  }

  figures(): ActivityFigures {
    const [p50, p95] = this.latencies.percentiles([0.5, 0.95]);
    return {
      calls: this.calls,
      errors: this.errors,
      p50_ms: p50 ?? 0,
      p95_ms: p95 ?? 0,
      tokens: this.tokens,
    };
  }
}

/** Keys each breakdown keeps between prunings (it prunes when it holds twice as many). */
export const ACTIVITY_GROUP_KEEP = 2_000;

/**
 * One breakdown (by tool, credential or session): a tally per key, at most 2 × `keep` keys. When full, it keeps
 * the `keep` busiest (ties: the newest) and drops the rest. Exact whenever the window holds at most 2 × `keep`
 * distinct keys (it never prunes then); beyond that a dropped key that comes back counts from zero, so a key
 * can only be undercounted if it was ever among the least busy half — never one busy enough for the top 50
 * in practice. Totals and the series are always exact.
 */
export class ActivityGroups {
  readonly tallies = new Map<string, Tally>();
  constructor(private readonly keep = ACTIVITY_GROUP_KEEP) {}

  tally(key: string): Tally {
    let tally = this.tallies.get(key);
    if (!tally) {
      if (this.tallies.size >= 2 * this.keep) this.prune();
      tally = new Tally();
      this.tallies.set(key, tally);
    }
    return tally;
  }

  get size(): number {
    return this.tallies.size;
  }

  /** The largest first (ties by key), at most `ACTIVITY_TOP`. */
  top(): (ActivityFigures & { key: string })[] {
    return [...this.tallies.entries()]
      .sort(([keyA, a], [keyB, b]) => b.calls - a.calls || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0))
      .slice(0, ACTIVITY_TOP)
      .map(([key, tally]) => ({ key, ...tally.figures() }));
  }

  private prune(): void {
    // The keep-th largest count, from a typed sort of the counts (cheaper than sorting the entries); keys above
    // it stay, keys below go, and of the keys equal to it the newest stay (an old key seen as often as a new one
    // is the one less likely to come back), until `keep` remain.
    const counts = Float64Array.from(this.tallies.values(), (tally) => tally.calls).sort();
    const threshold = counts[counts.length - this.keep] ?? 0;
    let above = 0;
    let ties = 0;
    for (const count of counts) {
      if (count > threshold) above += 1;
      else if (count === threshold) ties += 1;
    }
    let tiesToDrop = above + ties - this.keep;
    for (const [key, tally] of this.tallies) {
      if (tally.calls > threshold) continue;
      if (tally.calls === threshold && tiesToDrop <= 0) continue;
      if (tally.calls === threshold) tiesToDrop -= 1;
      this.tallies.delete(key);
    }
  }
}

interface CallRow {
  id: number;
  at: string;
  tool: string | null;
  credential: string | null;
  session: string | null;
  status: string | null;
  latency: number | string | null;
  tokens: number | string | null;
}

/** One chunk of tool calls in (at, id) order: the columns the audit log fills for each call. */
export const ACTIVITY_CHUNK_SQL = `SELECT id, at, tool, credential_id AS credential, session_id AS session, status, latency_ms AS latency,
    tokens_consumed AS tokens
  FROM events WHERE at >= $1 AND at < $2 AND kind = 'tool_call' AND (at > $1 OR id > $3)
  ORDER BY at, id LIMIT $4`;

/** Rows read per statement; between chunks the event loop serves other requests. */
export const ACTIVITY_CHUNK = 5_000;

/**
 * Aggregates the tool calls recorded in [since, until); the caller bounds the bucket count. Read in keyset
 * chunks of (at, id) with a yield between them, so 100,000 calls never hold the server's event loop for long.
 */
export async function aggregateActivity(db: SqlExecutor, query: ActivityQuery): Promise<Activity> {
  const unit = BUCKET_MS[query.bucket];
  const start = firstBucketStart(query.since, query.bucket);
  const buckets = Array.from({ length: bucketCount(query) }, () => new Tally());
  const totals = new Tally();
  const byTool = new ActivityGroups();
  const byCredential = new ActivityGroups();
  const bySession = new ActivityGroups();
  // Times are stored as toISOString(), so the range compares as text on the `at` index (which holds the id).
  const until = query.until.toISOString();
  // Each chunk's index range starts at the last row read: (at, id) after it, never a rescan from `since`.
  const read = (after: { at: string; id: number }) =>
    db.all<CallRow>(ACTIVITY_CHUNK_SQL, [after.at, until, after.id, ACTIVITY_CHUNK]);
  let next = read({ at: query.since.toISOString(), id: 0 });
  for (;;) {
    const rows = await next;
    const last = rows.at(-1);
    const more = last !== undefined && rows.length === ACTIVITY_CHUNK;
    // The next chunk is on its way (from PostgreSQL, over the network) while this one is counted.
    if (more) next = read({ at: last.at, id: Number(last.id) });
    for (const { at, tool, credential, session, status, latency, tokens } of rows) {
      const error = ERROR_STATUSES.has(String(status));
      const bin = latencyBin(Number(latency));
      const tokenCount = Number(tokens) || 0;
      totals.add(error, bin, tokenCount);
      buckets[Math.floor((Date.parse(at) - start) / unit)]?.add(error, bin, tokenCount);
      byTool.tally(String(tool)).add(error, bin, tokenCount);
      byCredential.tally(String(credential)).add(error, bin, tokenCount);
      // Calls without a session (no x-ivoai-session-id) are in every other figure, not in by_session.
      if (session) bySession.tally(String(session)).add(error, bin, tokenCount);
    }
    if (!more) break;
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
    by_tool: byTool.top(),
    by_credential: byCredential.top(),
    by_session: bySession.top(),
  };
}
