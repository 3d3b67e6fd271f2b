// The standard ranking metrics for one query: nDCG@k with linear gains (trec_eval's ndcg_cut), recall@k, MRR@k.

/** nDCG@k: the ranking's discounted gain over the ideal ordering's (0 without a relevant document). */
export function ndcgAt(ranked: readonly string[], relevant: ReadonlyMap<string, number>, k: number): number {
  const dcg = (gains: readonly number[]) => gains.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  const ideal = dcg([...relevant.values()].sort((a, b) => b - a).slice(0, k));
  return ideal > 0 ? dcg(ranked.slice(0, k).map((id) => relevant.get(id) ?? 0)) / ideal : 0;
}

/** recall@k: the share of the relevant documents in the first k. */
export function recallAt(
  ranked: readonly string[],
  relevant: ReadonlyMap<string, number>,
  k: number,
): number {
  if (relevant.size === 0) return 0;
  return new Set(ranked.slice(0, k).filter((id) => relevant.has(id))).size / relevant.size;
}

/** MRR@k: 1 / the rank of the first relevant document within the first k, else 0. */
export function mrrAt(ranked: readonly string[], relevant: ReadonlyMap<string, number>, k: number): number {
  const first = ranked.slice(0, k).findIndex((id) => relevant.has(id));
  return first >= 0 ? 1 / (first + 1) : 0;
}

export interface QueryScores {
  ndcg10: number;
  recall: number;
  mrr10: number;
}

/** The three figures `server eval` reports for one ranked list: nDCG@10, recall@k, MRR@10. */
export function scoreQuery(
  ranked: readonly string[],
  relevant: ReadonlyMap<string, number>,
  k: number,
): QueryScores {
  return {
    ndcg10: ndcgAt(ranked, relevant, 10),
    recall: recallAt(ranked, relevant, k),
    mrr10: mrrAt(ranked, relevant, 10),
  };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}
