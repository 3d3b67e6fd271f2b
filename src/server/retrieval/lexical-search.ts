// A lexical search over the index's data: BM25, RM3 pseudo-relevance feedback (a second pass over the first's
// scores), then a proximity re-ranking of the head.
import { allowedSlots } from "./allowed-bitmaps.js";
import { compactData, distinctTerms, type LexicalData, slotOf, termsOf } from "./lexical-data.js";
import type { LexicalHit, LexicalSearchOptions } from "./lexical-index.js";
import { accumulate, byScore, idf, prepareNorms, resetScores, topK } from "./lexical-scoring.js";

/** The hits for `query` (term → weight): see `LexicalIndex.search`. */
export function searchData(
  data: LexicalData,
  query: ReadonlyMap<string, number>,
  options: LexicalSearchOptions,
): LexicalHit[] {
  // Passages of a bulk load have no postings until it is compacted.
  if (data.bulk) compactData(data);
  const weights = queryWeights(data, query);
  if (weights.size === 0 || data.liveCount === 0) return [];
  const { hits, originalFactor } = rankByBm25(data, weights, options);
  // Proximity counts pairs of the user's own terms, weighted as in the final query.
  const original = new Map([...weights].map(([id, weight]) => [id, weight * originalFactor]));
  const reranked = options.proximityDepth ?? hits.length;
  if (reranked >= hits.length) return rerankByProximity(data, original, hits).slice(0, options.limit);
  // Proximity only adds to a score, so the re-ranked head stays above the tail.
  return [...rerankByProximity(data, original, hits.slice(0, reranked)), ...hits.slice(reranked)].slice(
    0,
    options.limit,
  );
}

/** The query's known terms (in some live passage) by id, weights of repeated terms summed. */
function queryWeights(data: LexicalData, query: ReadonlyMap<string, number>): Map<number, number> {
  const weights = new Map<number, number>();
  for (const [term, weight] of query) {
    const id = data.vocabulary.ids.get(term);
    if (id !== undefined && (data.df[id] ?? 0) > 0) weights.set(id, (weights.get(id) ?? 0) + weight);
  }
  return weights;
}

/**
 * The best BM25 hits (with feedback unless the options or parameters turn it off), deep enough for proximity,
 * and the factor the original query's weights had in the final pass.
 */
function rankByBm25(
  data: LexicalData,
  weights: ReadonlyMap<number, number>,
  options: LexicalSearchOptions,
): { hits: LexicalHit[]; originalFactor: number } {
  const { params } = data;
  const depth = Math.max(options.limit, params.proximityWeight > 0 ? params.proximityDepth : 0);
  // Confined to groups with a bitmap, only the allowed passages are scored: every touched slot is a candidate.
  const allowed = options.groups === undefined ? undefined : allowedSlots(data, options.groups);
  const mask = allowed === undefined ? options.groups : undefined;
  try {
    accumulate(data, weights, allowed);
    let originalFactor = 1;
    if (options.feedback !== false && params.feedbackDocs > 0)
      originalFactor = addFeedback(data, weights, allowed, mask);
    return { hits: topK(data, depth, 0, mask), originalFactor };
  } finally {
    resetScores(data);
  }
}

/**
 * The second pass, which reuses the first: its scores are scaled for the expanded query while the feedback
 * passages are picked (by the unscaled scores), then only the expansion terms' postings are added. Returns the
 * original query's factor.
 */
function addFeedback(
  data: LexicalData,
  weights: ReadonlyMap<number, number>,
  allowed: Int32Array | undefined,
  mask: Uint8Array | undefined,
): number {
  const { params } = data;
  const scale = params.originalWeight / [...weights.values()].reduce((sum, weight) => sum + weight, 0);
  const rm3 = expansion(data, weights, topK(data, params.feedbackDocs, scale, mask));
  if (rm3) {
    accumulate(data, rm3.added, allowed);
    return rm3.originalFactor;
  }
  // No expansion after all (rare): the first pass again, unscaled.
  resetScores(data);
  accumulate(data, weights, allowed);
  return 1;
}

/**
 * RM3 expansion terms from the top results: each term's weight is its frequency in a result, weighted
 * by that result's share of the scores. Returns the factor for the original query and the added terms.
 */
export function expansion(
  data: LexicalData,
  original: ReadonlyMap<number, number>,
  top: LexicalHit[],
): { originalFactor: number; added: Map<number, number> } | undefined {
  const { params } = data;
  const total = top.reduce((sum, hit) => sum + hit.score, 0);
  if (top.length === 0 || total <= 0) return undefined;
  const candidate = feedbackCandidates(data, top, total);
  const chosen = [...candidate].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, params.feedbackTerms);
  const chosenSum = chosen.reduce((sum, [, weight]) => sum + weight, 0);
  const originalSum = [...original.values()].reduce((sum, weight) => sum + weight, 0);
  if (chosenSum <= 0 || originalSum <= 0) return undefined;
  const added = new Map<number, number>();
  for (const [id, weight] of chosen) added.set(id, ((1 - params.originalWeight) * weight) / chosenSum);
  return { originalFactor: params.originalWeight / originalSum, added };
}

/** Term id → summed weight over the `top` passages (scores summing to `total`), near-stopwords left out. */
function feedbackCandidates(data: LexicalData, top: LexicalHit[], total: number): Map<number, number> {
  const maxDf = data.params.feedbackMaxDfRatio * data.liveCount;
  const candidate = new Map<number, number>();
  for (const hit of top) {
    const slot = slotOf(data, hit.key);
    if (slot < 0) continue;
    const docWeight = hit.score / total / Math.max(1, data.lengths[slot] as number);
    distinctTerms(data, slot, (id, tf) => {
      // Near-stopwords carry almost no evidence and have the longest postings: leave them out.
      if ((data.df[id] ?? 0) > maxDf) return;
      candidate.set(id, (candidate.get(id) ?? 0) + docWeight * tf);
    });
  }
  return candidate;
}

/** Adds a BM25-saturated score for query-term pairs found close together (Rasolofo & Savoy style). */
export function rerankByProximity(
  data: LexicalData,
  weights: ReadonlyMap<number, number>,
  hits: LexicalHit[],
): LexicalHit[] {
  const { params } = data;
  const terms = [...weights.keys()];
  if (params.proximityWeight <= 0 || terms.length < 2) return hits;
  const query: ProximityQuery = {
    position: new Map<number, number>(terms.map((id, index) => [id, index])),
    termWeight: terms.map((id) => idf(data, id) * (weights.get(id) ?? 0)),
    last: new Float64Array(terms.length),
    pair: new Float64Array(terms.length * terms.length),
  };
  prepareNorms(data);
  const reranked = hits.map((hit) => {
    const bonus = proximityBonus(data, query, slotOf(data, hit.key));
    return { key: hit.key, score: hit.score + params.proximityWeight * bonus };
  });
  return reranked.sort(byScore);
}

/** The query terms' positions among themselves and weights, with scratch for one passage at a time. */
interface ProximityQuery {
  position: Map<number, number>;
  termWeight: number[];
  /** Per query term, where it was last seen in the passage. */
  last: Float64Array;
  /** Per pair of query terms (a < b at a * n + b), the sum of 1 / distance² over their near occurrences. */
  pair: Float64Array;
}

/** The proximity score of `slot`: each pair's term-proximity, saturated like a tf, weighted by its rarer term. */
function proximityBonus(data: LexicalData, query: ProximityQuery, slot: number): number {
  const { k1 } = data.params;
  const { pair, termWeight } = query;
  const n = termWeight.length;
  countNearPairs(data, query, slot);
  let bonus = 0;
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const tpi = pair[a * n + b] as number;
      if (tpi > 0) {
        const weight = Math.min(termWeight[a] as number, termWeight[b] as number);
        bonus += (weight * tpi * (k1 + 1)) / (tpi + (data.cells[slot * 2] as number));
      }
    }
  }
  return bonus;
}

/** Fills `query.pair` for `slot`'s passage: query terms within the window of each other. */
function countNearPairs(data: LexicalData, query: ProximityQuery, slot: number): void {
  const { position, last, pair } = query;
  const n = last.length;
  const window = data.params.proximityWindow;
  const sequence = termsOf(data, slot);
  last.fill(Number.NEGATIVE_INFINITY);
  pair.fill(0);
  for (let at = 0; at < (data.lengths[slot] as number); at++) {
    const index = position.get(sequence[at] as number);
    if (index === undefined) continue;
    for (let other = 0; other < n; other++) {
      const distance = at - (last[other] as number);
      if (other !== index && distance <= window) {
        const cell = Math.min(index, other) * n + Math.max(index, other);
        pair[cell] = (pair[cell] as number) + 1 / (distance * distance);
      }
    }
    last[index] = at;
  }
}
