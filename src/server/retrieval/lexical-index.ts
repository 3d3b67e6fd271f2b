// In-memory BM25 index with RM3 pseudo-relevance feedback; a rebuildable cache of the catalogue's analysed chunks.
//
// FTS5's bm25() fixes k1/b and cannot weight query terms, which relevance feedback needs, so the
// lexical ranking lives here over typed arrays; SQLite stays the authority for what is indexed.

export interface LexicalSearchOptions {
  limit: number;
  /** Expand the query with terms of its top results (RM3). Default true. */
  feedback?: boolean;
}

export interface LexicalHit {
  key: number;
  score: number;
}

export interface LexicalParams {
  k1: number;
  b: number;
  feedbackDocs: number;
  feedbackTerms: number;
  /** Weight of the original query against the expansion terms. */
  originalWeight: number;
  /** Terms in more than this share of passages are never expansion terms. */
  feedbackMaxDfRatio: number;
  /** Weight of the term-proximity score added to the top `proximityDepth` results (0 = off). */
  proximityWeight: number;
  proximityDepth: number;
  /** Largest distance (in terms) at which two query terms still count as near. */
  proximityWindow: number;
}

export const DEFAULT_LEXICAL_PARAMS: LexicalParams = {
  k1: 1.2,
  b: 0.75,
  feedbackDocs: 5,
  feedbackTerms: 20,
  originalWeight: 0.7,
  feedbackMaxDfRatio: 0.25,
  proximityWeight: 0.5,
  proximityDepth: 100,
  proximityWindow: 5,
};

class GrowableInt32 {
  data: Int32Array;
  length = 0;
  constructor(capacity = 4) {
    this.data = new Int32Array(capacity);
  }
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
}

export interface LexicalIndex {
  /** Adds a passage under `key` (replacing nothing: keys are unique for the life of the index). */
  add(key: number, terms: readonly string[]): void;
  remove(key: number): boolean;
  has(key: number): boolean;
  search(query: ReadonlyMap<string, number>, options: LexicalSearchOptions): LexicalHit[];
  readonly size: number;
  /** Removed passages whose postings are still in memory (reclaimed only by rebuilding the index). */
  readonly dead: number;
}

export function createLexicalIndex(params: LexicalParams = DEFAULT_LEXICAL_PARAMS): LexicalIndex {
  const termIds = new Map<string, number>();
  const termText: string[] = [];
  /** Per term: postings as interleaved (slot, tf) pairs. */
  const postings: GrowableInt32[] = [];
  const df: number[] = [];
  /** Per slot: key, length, alive, and its (term, tf) pairs in `forward`. */
  let keys = new Float64Array(1024);
  let lengths = new Float32Array(1024);
  let alive = new Uint8Array(1024);
  let forwardStart = new Int32Array(1025);
  const forward = new GrowableInt32(1 << 16);
  /** Per slot: its terms in text order, for proximity. */
  let sequenceStart = new Int32Array(1025);
  const sequence = new GrowableInt32(1 << 16);
  const slotOf = new Map<number, number>();
  let slots = 0;
  let liveCount = 0;
  let totalLength = 0;
  let norms: Float32Array | undefined;
  let scores = new Float32Array(1024);

  const grow = () => {
    const capacity = keys.length * 2;
    const copy = <T extends Float64Array | Float32Array | Uint8Array | Int32Array>(
      source: T,
      size: number,
    ): T => {
      const next = new (source.constructor as new (n: number) => T)(size);
      next.set(source);
      return next;
    };
    keys = copy(keys, capacity);
    lengths = copy(lengths, capacity);
    alive = copy(alive, capacity);
    forwardStart = copy(forwardStart, capacity + 1);
    sequenceStart = copy(sequenceStart, capacity + 1);
    scores = new Float32Array(capacity);
  };

  const termId = (term: string): number => {
    let id = termIds.get(term);
    if (id === undefined) {
      id = termText.length;
      termIds.set(term, id);
      termText.push(term);
      postings.push(new GrowableInt32());
      df.push(0);
    }
    return id;
  };

  const idf = (id: number) => {
    const n = df[id] ?? 0;
    return Math.log(1 + (liveCount - n + 0.5) / (n + 0.5));
  };

  const normsFor = (): Float32Array => {
    if (!norms || norms.length < slots) {
      norms = new Float32Array(keys.length);
      const average = liveCount > 0 ? totalLength / liveCount : 1;
      for (let slot = 0; slot < slots; slot++) {
        norms[slot] = params.k1 * (1 - params.b + (params.b * (lengths[slot] ?? 0)) / average);
      }
    }
    return norms;
  };

  /** Adds the BM25 contributions of `weights` into `scores`, noting newly touched slots. */
  const accumulate = (weights: ReadonlyMap<number, number>, touched: GrowableInt32): void => {
    const norm = normsFor();
    for (const [id, weight] of weights) {
      const list = postings[id];
      if (!list || weight <= 0) continue;
      const factor = weight * idf(id) * (params.k1 + 1);
      const data = list.data;
      for (let i = 0; i < list.length; i += 2) {
        const slot = data[i] as number;
        if (alive[slot] === 0) continue;
        const tf = data[i + 1] as number;
        if (scores[slot] === 0) touched.push(slot);
        scores[slot] = (scores[slot] as number) + (factor * tf) / (tf + (norm[slot] as number));
      }
    }
  };

  const reset = (touched: GrowableInt32) => {
    for (let i = 0; i < touched.length; i++) scores[touched.data[i] as number] = 0;
  };

  /** The best `limit` touched slots, by score then key; a binary heap over slot numbers (no allocation per slot). */
  const topK = (touched: GrowableInt32, limit: number): LexicalHit[] => {
    const heap = new Int32Array(Math.max(1, limit));
    let size = 0;
    // "a ranks below b": lower score, or equal score and larger key.
    const below = (a: number, b: number) => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      return sa < sb || (sa === sb && (keys[a] as number) > (keys[b] as number));
    };
    const siftDown = (from: number) => {
      let at = from;
      for (;;) {
        const left = at * 2 + 1;
        const right = left + 1;
        let lowest = at;
        if (left < size && below(heap[left] as number, heap[lowest] as number)) lowest = left;
        if (right < size && below(heap[right] as number, heap[lowest] as number)) lowest = right;
        if (lowest === at) return;
        const swap = heap[at] as number;
        heap[at] = heap[lowest] as number;
        heap[lowest] = swap;
        at = lowest;
      }
    };
    for (let i = 0; i < touched.length; i++) {
      const slot = touched.data[i] as number;
      if (size < limit) {
        let at = size++;
        heap[at] = slot;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (!below(heap[at] as number, heap[parent] as number)) break;
          const swap = heap[at] as number;
          heap[at] = heap[parent] as number;
          heap[parent] = swap;
          at = parent;
        }
      } else if (limit > 0 && below(heap[0] as number, slot)) {
        heap[0] = slot;
        siftDown(0);
      }
    }
    const out: LexicalHit[] = [];
    for (let i = 0; i < size; i++)
      out.push({ key: keys[heap[i] as number] as number, score: scores[heap[i] as number] as number });
    return out.sort((a, b) => b.score - a.score || a.key - b.key);
  };

  /** Adds a BM25-saturated score for query-term pairs found close together (Rasolofo & Savoy style). */
  const rerankByProximity = (weights: ReadonlyMap<number, number>, hits: LexicalHit[]): LexicalHit[] => {
    const terms = [...weights.keys()];
    if (params.proximityWeight <= 0 || terms.length < 2) return hits;
    const position = new Map<number, number>(terms.map((id, index) => [id, index]));
    const termWeight = terms.map((id) => idf(id) * (weights.get(id) ?? 0));
    const norm = normsFor();
    const window = params.proximityWindow;
    const last = new Float64Array(terms.length);
    const pair = new Float64Array(terms.length * terms.length);
    const reranked = hits.map((hit) => {
      const slot = slotOf.get(hit.key) as number;
      last.fill(Number.NEGATIVE_INFINITY);
      pair.fill(0);
      for (let p = sequenceStart[slot] as number; p < (sequenceStart[slot + 1] as number); p++) {
        const index = position.get(sequence.data[p] as number);
        if (index === undefined) continue;
        for (let other = 0; other < terms.length; other++) {
          const distance = p - (last[other] as number);
          if (other !== index && distance <= window) {
            const cell = Math.min(index, other) * terms.length + Math.max(index, other);
            pair[cell] = (pair[cell] as number) + 1 / (distance * distance);
          }
        }
        last[index] = p;
      }
      let bonus = 0;
      for (let a = 0; a < terms.length; a++) {
        for (let b = a + 1; b < terms.length; b++) {
          const tpi = pair[a * terms.length + b] as number;
          if (tpi > 0) {
            const weight = Math.min(termWeight[a] as number, termWeight[b] as number);
            bonus += (weight * tpi * (params.k1 + 1)) / (tpi + (norm[slot] as number));
          }
        }
      }
      return { key: hit.key, score: hit.score + params.proximityWeight * bonus };
    });
    return reranked.sort((a, b) => b.score - a.score || a.key - b.key);
  };

  /**
   * RM3 expansion terms from the top results: each term's weight is its frequency in a result, weighted
   * by that result's share of the scores. Returns the factor for the original query and the added terms.
   */
  const expansion = (
    original: ReadonlyMap<number, number>,
    top: LexicalHit[],
  ): { originalFactor: number; added: Map<number, number> } | undefined => {
    const total = top.reduce((sum, hit) => sum + hit.score, 0);
    if (top.length === 0 || total <= 0) return undefined;
    const maxDf = params.feedbackMaxDfRatio * liveCount;
    const candidate = new Map<number, number>();
    for (const hit of top) {
      const slot = slotOf.get(hit.key);
      if (slot === undefined) continue;
      const docWeight = hit.score / total / Math.max(1, lengths[slot] as number);
      for (let i = forwardStart[slot] as number; i < (forwardStart[slot + 1] as number); i += 2) {
        const id = forward.data[i] as number;
        // Near-stopwords carry almost no evidence and have the longest postings: leave them out.
        if ((df[id] ?? 0) > maxDf) continue;
        candidate.set(id, (candidate.get(id) ?? 0) + docWeight * (forward.data[i + 1] as number));
      }
    }
    const chosen = [...candidate].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, params.feedbackTerms);
    const chosenSum = chosen.reduce((sum, [, weight]) => sum + weight, 0);
    const originalSum = [...original.values()].reduce((sum, weight) => sum + weight, 0);
    if (chosenSum <= 0 || originalSum <= 0) return undefined;
    const added = new Map<number, number>();
    for (const [id, weight] of chosen) added.set(id, ((1 - params.originalWeight) * weight) / chosenSum);
    return { originalFactor: params.originalWeight / originalSum, added };
  };

  return {
    get size() {
      return liveCount;
    },
    get dead() {
      return slots - liveCount;
    },
    has: (key) => slotOf.has(key),
    add(key, terms) {
      if (slotOf.has(key)) throw new Error(`lexical index already holds key ${key}`);
      if (slots === keys.length) grow();
      const slot = slots++;
      const counts = new Map<number, number>();
      sequenceStart[slot] = sequence.length;
      for (const term of terms) {
        const id = termId(term);
        counts.set(id, (counts.get(id) ?? 0) + 1);
        sequence.push(id);
      }
      sequenceStart[slot + 1] = sequence.length;
      forwardStart[slot] = forward.length;
      for (const [id, tf] of counts) {
        postings[id]?.push(slot);
        postings[id]?.push(Math.min(tf, 0xffff));
        df[id] = (df[id] ?? 0) + 1;
        forward.push(id);
        forward.push(tf);
      }
      forwardStart[slot + 1] = forward.length;
      keys[slot] = key;
      lengths[slot] = terms.length;
      alive[slot] = 1;
      slotOf.set(key, slot);
      liveCount += 1;
      totalLength += terms.length;
      norms = undefined;
    },
    remove(key) {
      const slot = slotOf.get(key);
      if (slot === undefined) return false;
      slotOf.delete(key);
      alive[slot] = 0;
      for (let i = forwardStart[slot] as number; i < (forwardStart[slot + 1] as number); i += 2) {
        const id = forward.data[i] as number;
        df[id] = (df[id] ?? 1) - 1;
      }
      liveCount -= 1;
      totalLength -= lengths[slot] as number;
      norms = undefined;
      return true;
    },
    search(query, options) {
      const weights = new Map<number, number>();
      for (const [term, weight] of query) {
        const id = termIds.get(term);
        if (id !== undefined && (df[id] ?? 0) > 0) weights.set(id, (weights.get(id) ?? 0) + weight);
      }
      if (weights.size === 0 || liveCount === 0) return [];
      const depth = Math.max(options.limit, params.proximityWeight > 0 ? params.proximityDepth : 0);
      const touched = new GrowableInt32(256);
      accumulate(weights, touched);
      let originalFactor = 1;
      if (options.feedback !== false && params.feedbackDocs > 0) {
        // The second pass reuses the first: scale its scores, then add only the expansion terms' postings.
        const rm3 = expansion(weights, topK(touched, params.feedbackDocs));
        if (rm3) {
          originalFactor = rm3.originalFactor;
          for (let i = 0; i < touched.length; i++) {
            const slot = touched.data[i] as number;
            scores[slot] = (scores[slot] as number) * originalFactor;
          }
          accumulate(rm3.added, touched);
        }
      }
      const hits = topK(touched, depth);
      reset(touched);
      // Proximity counts pairs of the user's own terms, weighted as in the final query.
      const original = new Map([...weights].map(([id, weight]) => [id, weight * originalFactor]));
      return rerankByProximity(original, hits).slice(0, options.limit);
    },
  };
}
