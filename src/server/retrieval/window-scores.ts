// BM25 of windows of passages (e.g. a turn of a conversation and the turns around it), each taken as one passage.
import { type LexicalData, slotOf, termsOf } from "./lexical-data.js";
import { idf } from "./lexical-scoring.js";

/** The query's known terms numbered 0..n-1 (`column` by term id) with their weights times idf. */
interface WindowQuery {
  column: Map<number, number>;
  termWeights: number[];
}

/** A passage's length and its counts of the query terms by column (undefined: none of them). */
interface PassageCounts {
  length: number;
  counts: Float64Array | undefined;
}

/** See `LexicalIndex.windowScores`. */
export function windowScoresOf(
  data: LexicalData,
  query: ReadonlyMap<string, number>,
  windows: readonly (readonly number[])[],
  weights?: readonly (readonly number[])[],
): number[] {
  const windowQuery = windowQueryOf(data, query);
  const n = windowQuery.termWeights.length;
  // Each passage's counts are read once, however many windows hold it (a turn is in the windows of up to ten others).
  const counted = new Map<number, PassageCounts | null>();
  const countsOf = (key: number): PassageCounts | null => {
    let entry = counted.get(key);
    if (entry === undefined) {
      entry = passageCounts(data, windowQuery.column, n, key);
      counted.set(key, entry);
    }
    return entry;
  };
  const tf = new Float64Array(n);
  return windows.map((window, w) =>
    n === 0 ? 0 : windowScore(data, windowQuery.termWeights, tf, window, weights?.[w], countsOf),
  );
}

function windowQueryOf(data: LexicalData, query: ReadonlyMap<string, number>): WindowQuery {
  const column = new Map<number, number>();
  const termWeights: number[] = [];
  for (const [term, weight] of query) {
    const id = data.vocabulary.ids.get(term);
    if (id === undefined || (data.df[id] ?? 0) <= 0 || weight <= 0) continue;
    let at = column.get(id);
    if (at === undefined) {
      at = termWeights.length;
      column.set(id, at);
      termWeights.push(0);
    }
    termWeights[at] = (termWeights[at] as number) + weight * idf(data, id);
  }
  return { column, termWeights };
}

/** `key`'s passage counted against the query's `n` columns; null for an unknown key. */
function passageCounts(
  data: LexicalData,
  column: ReadonlyMap<number, number>,
  n: number,
  key: number,
): PassageCounts | null {
  const slot = slotOf(data, key);
  if (slot < 0) return null;
  const sequence = termsOf(data, slot);
  const length = data.lengths[slot] as number;
  let counts: Float64Array | undefined;
  for (let p = 0; p < length; p++) {
    const at = column.get(sequence[p] as number);
    if (at === undefined) continue;
    counts ??= new Float64Array(n);
    counts[at] = (counts[at] as number) + 1;
  }
  return { length, counts };
}

/**
 * One window's score: term frequencies summed over its passages (each at its share, default 1), its length
 * against the average passage length times the window's size. `tf` is scratch of the query's width.
 */
function windowScore(
  data: LexicalData,
  termWeights: readonly number[],
  tf: Float64Array,
  window: readonly number[],
  shares: readonly number[] | undefined,
  countsOf: (key: number) => PassageCounts | null,
): number {
  const { k1, b } = data.params;
  const n = termWeights.length;
  tf.fill(0);
  let length = 0;
  let passages = 0;
  for (let i = 0; i < window.length; i++) {
    const share = shares?.[i] ?? 1;
    if (share <= 0) continue;
    const entry = countsOf(window[i] as number);
    if (!entry) continue;
    passages += share;
    length += share * entry.length;
    const counts = entry.counts;
    if (counts) for (let at = 0; at < n; at++) tf[at] = (tf[at] as number) + share * (counts[at] as number);
  }
  const average = data.liveCount > 0 ? data.totalLength / data.liveCount : 1;
  const norm = k1 * (1 - b + (b * length) / (average * Math.max(1, passages)));
  let score = 0;
  for (let at = 0; at < n; at++) {
    const count = tf[at] as number;
    if (count > 0) score += ((termWeights[at] as number) * count * (k1 + 1)) / (count + norm);
  }
  return score;
}
