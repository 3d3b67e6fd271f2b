// `ivoai usage`: the tokens and price of orchestrated sessions summed by day (the session's start, in UTC) and
// executor, from what each session record already holds. A price is a lower bound wherever an executor did not
// say one (codex never does): the sums say so instead of counting the unknown as $0.
import type { AutoState, Usage } from "./auto-state.js";
import { openSessionStore, type SessionRecord } from "./store.js";

type ExecutorName = AutoState["primary"];
const EXECUTORS: readonly ExecutorName[] = ["codex", "claude"];

/** Tokens, turns and price summed over some sessions' share of one executor (or of all of them). */
export interface UsageSum {
  sessions: number;
  /** Turns the session records still list (each keeps its last 64); see turns_complete. */
  turns: number;
  /** False when a session dropped older turns from its record: `turns` is then a lower bound. */
  turns_complete: boolean;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  /** The sum of the prices the executors said; null when none said one. */
  cost_usd: number | null;
  /** False when some of the usage came without a price: cost_usd is then a lower bound (or unknown). */
  cost_complete: boolean;
}

export interface UsageRow extends UsageSum {
  /** YYYY-MM-DD of the session's start, in UTC. */
  day: string;
  executor: ExecutorName;
}

export interface UsageReport {
  /** Sessions started at or after this instant (ISO), or every one. */
  since: string | null;
  /** Sessions started before this instant (ISO), or every one. */
  until: string | null;
  /** Days are calendar days in UTC. */
  time_zone: "UTC";
  /** One row per day and executor, oldest day first. */
  rows: UsageRow[];
  /** Per executor over the whole range. */
  by_executor: (UsageSum & { executor: ExecutorName })[];
  /** Everything in the range; its turns are exact (each session counts all of its turns). */
  totals: UsageSum;
}

export interface UsageRange {
  since?: string | undefined;
  until?: string | undefined;
}

/** One session's share of one executor: what is added up. */
interface Share {
  sessionId: string;
  day: string;
  executor: ExecutorName;
  usage: Usage | null;
  turns: number;
  turnsComplete: boolean;
}

/** Whether `usage` spent tokens without saying their price. */
function priceMissing(usage: (Usage & { unpriced_turns?: number }) | null): boolean {
  if (usage === null) return false;
  // Sums recorded since the count exists say exactly how many turns had no price.
  if (usage.unpriced_turns !== undefined && (usage as { turns?: number }).turns)
    return usage.unpriced_turns > 0;
  const spent = usage.input_tokens + usage.output_tokens > 0;
  return spent && usage.cost_usd === null;
}

/** The executors a session used (by its sums or its listed turns), each with its share. */
function sharesOf(session: SessionRecord, auto: AutoState): Share[] {
  const day = new Date(session.started_at).toISOString().slice(0, 10);
  const turnsComplete = auto.usage.turns <= auto.turns.length;
  return EXECUTORS.flatMap((executor) => {
    const usage = auto.usage_by_executor[executor] ?? null;
    const listed = auto.turns.filter((turn) => turn.executor === executor).length;
    if (usage === null && listed === 0) return [];
    // Sums recorded since they count turns are exact; older records only list their last 64 turns.
    const counted = usage?.turns ?? 0;
    const turns = counted > 0 ? counted : listed;
    return [
      { sessionId: session.id, day, executor, usage, turns, turnsComplete: counted > 0 || turnsComplete },
    ];
  });
}

function sumShares(shares: readonly Share[]): UsageSum {
  const known = shares.flatMap((share) => (share.usage?.cost_usd == null ? [] : [share.usage.cost_usd]));
  const total = (pick: (usage: Usage) => number) =>
    shares.reduce((sum, share) => sum + (share.usage ? pick(share.usage) : 0), 0);
  return {
    sessions: new Set(shares.map((share) => share.sessionId)).size,
    turns: shares.reduce((sum, share) => sum + share.turns, 0),
    turns_complete: shares.every((share) => share.turnsComplete),
    input_tokens: total((usage) => usage.input_tokens),
    cached_input_tokens: total((usage) => usage.cached_input_tokens),
    output_tokens: total((usage) => usage.output_tokens),
    cost_usd: known.length === 0 ? null : Math.round(known.reduce((sum, cost) => sum + cost, 0) * 1e6) / 1e6,
    cost_complete: shares.every((share) => !priceMissing(share.usage)),
  };
}

function inRange(startedAt: string, range: UsageRange): boolean {
  const at = Date.parse(startedAt);
  if (range.since !== undefined && at < Date.parse(range.since)) return false;
  if (range.until !== undefined && at >= Date.parse(range.until)) return false;
  return true;
}

/** Sums the orchestrated sessions among `sessions` started in [since, until) by UTC day and executor. */
export function summariseUsage(sessions: readonly SessionRecord[], range: UsageRange = {}): UsageReport {
  const chosen = sessions.flatMap((session) =>
    session.auto && inRange(session.started_at, range) ? [{ session, auto: session.auto }] : [],
  );
  const shares = chosen.flatMap(({ session, auto }) => sharesOf(session, auto));
  const groups = new Map<string, Share[]>();
  for (const share of shares) {
    const key = `${share.day} ${EXECUTORS.indexOf(share.executor)}`;
    groups.set(key, [...(groups.get(key) ?? []), share]);
  }
  const rows = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, group]) => {
      const [first] = group as [Share, ...Share[]];
      return { day: first.day, executor: first.executor, ...sumShares(group) };
    });
  const byExecutor = EXECUTORS.flatMap((executor) => {
    const mine = shares.filter((share) => share.executor === executor);
    return mine.length === 0 ? [] : [{ executor, ...sumShares(mine) }];
  });
  return {
    since: range.since ?? null,
    until: range.until ?? null,
    time_zone: "UTC",
    rows,
    by_executor: byExecutor,
    totals: {
      ...sumShares(shares),
      sessions: chosen.length,
      turns: chosen.reduce((sum, { auto }) => sum + auto.usage.turns, 0),
      turns_complete: true,
    },
  };
}

/** The usage report of every orchestrated session recorded under `stateDir`. */
export async function readUsageReport(stateDir: string, range: UsageRange = {}): Promise<UsageReport> {
  return summariseUsage(await openSessionStore(stateDir).list(), range);
}

/** Whether every priced executor of a session said its price: false makes the session's cost a lower bound. */
export function sessionPriceComplete(auto: AutoState): boolean {
  return EXECUTORS.every((executor) => !priceMissing(auto.usage_by_executor[executor] ?? null));
}

/** Whether every listed turn of a task that spent tokens said its price (a task failed over may mix both). */
export function taskPriceComplete(auto: AutoState, taskId: string): boolean {
  return auto.turns.every((turn) => turn.task_id !== taskId || !priceMissing(turn.usage));
}
