// How the lexical and vector rankings are combined: weighted reciprocal-rank fusion over a candidate depth.
// The defaults are tuned on the dev sets (bench/tune-corpus.ts, bench/results/tune-corpus.md).

export interface FusionParams {
  /** The RRF constant: larger flattens the rank curve. */
  k: number;
  /** The vector ranking's weight against the lexical one's 1. */
  vectorWeight: number;
  /** Candidates taken from each ranking: limit × depthFactor + depthExtra. */
  depthFactor: number;
  depthExtra: number;
}

/** For an embedding model (tei, onnx): plain RRF (Cormack et al.). */
export const DEFAULT_FUSION: FusionParams = { k: 60, vectorWeight: 1, depthFactor: 4, depthExtra: 20 };

/** For the corpus embedder, whose LSA ranking mostly re-finds the lexical one: a light touch (tuned). */
export const CORPUS_FUSION: FusionParams = { k: 100, vectorWeight: 0.2, depthFactor: 4, depthExtra: 20 };

export function fusionDepth(limit: number, params: FusionParams = DEFAULT_FUSION): number {
  return limit * params.depthFactor + params.depthExtra;
}

/** Fused ranking of passages (by seq), best first, ties by seq. */
export function fuseRankings(
  lexical: readonly { seq: number }[],
  semantic: readonly { seq: number }[],
  params: FusionParams = DEFAULT_FUSION,
): { seq: number; score: number }[] {
  const fused = new Map<number, number>();
  const add = (seq: number, rank: number, weight: number) =>
    fused.set(seq, (fused.get(seq) ?? 0) + weight / (params.k + rank + 1));
  for (const [rank, hit] of lexical.entries()) add(hit.seq, rank, 1);
  if (params.vectorWeight > 0)
    for (const [rank, hit] of semantic.entries()) add(hit.seq, rank, params.vectorWeight);
  return [...fused]
    .map(([seq, score]) => ({ seq, score }))
    .sort((a, b) => b.score - a.score || a.seq - b.seq);
}
