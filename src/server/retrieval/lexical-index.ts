// In-memory BM25 index with RM3 pseudo-relevance feedback; a rebuildable cache of the catalogue's analysed chunks.
//
// FTS5's bm25() fixes k1/b and cannot weight query terms, which relevance feedback needs, so the
// lexical ranking lives here over typed arrays; SQLite stays the authority for what is indexed.
//
// Layout: a compact base (one flat postings array per index, term ranges by offset; one flat term sequence per
// passage) that a snapshot can restore without copying, and growable tails for passages added since. A passage's
// distinct terms and their frequencies are read from its sequence when needed (feedback, removal).

export interface LexicalSearchOptions {
  limit: number;
  /** Expand the query with terms of its top results (RM3). Default true. */
  feedback?: boolean;
  /**
   * Only passages whose group (given when added) is set in this mask are results or feedback passages: a
   * filter applied while ranking, so that passages of other groups do not crowd the allowed ones out. Passages
   * of other groups are not even scored: the index keeps a bitmap of the allowed live passages per mask lately
   * searched with (kept in step with additions and removals), checked before each posting is scored (a mask
   * that finds every kept bitmap in use is searched without one: all scored, others left out at the top-k).
   */
  groups?: Uint8Array;
  /**
   * How many of the best results proximity re-ranks (default all that are returned, at least the parameters'
   * `proximityDepth`); the rest follow in BM25 order. A deep result list need not pay for proximity throughout.
   */
  proximityDepth?: number;
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

/**
 * An index's whole content as flat typed arrays (what a snapshot stores). Postings are interleaved
 * (slot, tf) pairs, term `t`'s in `postings[termStart[t] .. termStart[t + 1])`; slot `s`'s terms in text order
 * are `sequence[sequenceStart[s] .. sequenceStart[s] + lengths[s])`.
 */
export interface LexicalState {
  terms: string[];
  keys: Float64Array;
  alive: Uint8Array;
  lengths: Int32Array;
  sequenceStart: Int32Array;
  sequence: Int32Array;
  termStart: Int32Array;
  postings: Int32Array;
  df: Int32Array;
}

class GrowableInt32 {
  data: Int32Array;
  length = 0;
  constructor(capacity = 4) {
    this.data = new Int32Array(capacity);
  }
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(Math.max(4, this.data.length * 2));
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
}

export interface LexicalIndex {
  /**
   * Adds a passage under `key` (replacing nothing: keys are unique for the life of the index), in `group`
   * (default 0; searches may be confined to groups). Groups are not part of `state()`: a restored index has
   * every passage in group 0.
   */
  add(key: number, terms: readonly string[], group?: number): void;
  /** `add(key, text.split(" "), group)` (no terms for ""), without making a string per term. */
  addText(key: number, text: string, group?: number): void;
  remove(key: number): boolean;
  has(key: number): boolean;
  search(query: ReadonlyMap<string, number>, options: LexicalSearchOptions): LexicalHit[];
  /**
   * The BM25 score of each window of passages (e.g. a turn of a conversation and the turns around it) taken as
   * one passage: term frequencies summed over the window, its length against the average passage length times
   * the window's size. No feedback or proximity; unknown keys count for nothing.
   */
  windowScores(
    query: ReadonlyMap<string, number>,
    windows: readonly (readonly number[])[],
    weights?: readonly (readonly number[])[],
  ): number[];
  /** Folds passages added since the last compaction into the flat base arrays (one copy; frees the tails). */
  compact(): void;
  /** The content as flat arrays (compacts first). Arrays that later changes mutate are copies. */
  state(): LexicalState;
  readonly size: number;
  /** Removed passages whose postings are still in memory (reclaimed only by rebuilding the index). */
  readonly dead: number;
}

const EMPTY = new Int32Array(0);

/** Group masks whose passage bitmaps an index keeps (most recently used first), e.g. callers' sets of scopes. */
export const ALLOWED_BITMAPS = 16;
/**
 * Searches since its last use after which the least recently used bitmap may give way to a new mask's. Making
 * one is a pass over every passage (~1.5–3 ms at 500,000 on a busy machine, where a search is a few ms): while
 * more masks than the index keeps are all in use, the ones without a bitmap are searched as before one existed.
 */
const BITMAP_COLD_AFTER = ALLOWED_BITMAPS * 4;

/** The bitmap of the live passages in a mask's groups: bit `slot & 31` of word `slot >>> 5`. */
interface AllowedBitmap {
  mask: Uint8Array;
  bits: Int32Array;
  /** The search that last used it. */
  used: number;
}

/** Whether two group masks allow the same groups (a shorter mask allows none of the groups past its end). */
function sameGroups(a: Uint8Array, b: Uint8Array): boolean {
  const length = Math.max(a.length, b.length);
  for (let group = 0; group < length; group++) if ((a[group] === 1) !== (b[group] === 1)) return false;
  return true;
}

/** A new index, empty or restored from `state` (whose flat arrays it keeps without copying). */
export function createLexicalIndex(
  params: LexicalParams = DEFAULT_LEXICAL_PARAMS,
  state?: LexicalState,
): LexicalIndex {
  const termIds = new Map<string, number>();
  const termText: string[] = state ? state.terms : [];
  for (let id = 0; id < termText.length; id++) termIds.set(termText[id] as string, id);
  /** Base postings (flat, by term offset) and per-term tails for slots added since. */
  let baseStart: Int32Array = state ? state.termStart : new Int32Array(1);
  let basePostings: Int32Array = state ? state.postings : EMPTY;
  let tails: (GrowableInt32 | undefined)[] = [];
  // Copied: a view would keep the whole snapshot buffer alive after the next compaction replaced the rest.
  let df: Int32Array = state ? state.df.slice() : new Int32Array(1024);
  /** Per slot: key, length, alive, and where its term sequence starts (base below `baseSlots`, else tail). */
  let slots = state ? state.keys.length : 0;
  const initial = Math.max(1024, slots);
  const sized = <T extends Float64Array | Uint8Array | Int32Array>(
    source: T | undefined,
    make: new (n: number) => T,
    size: number,
  ): T => {
    const next = new make(size);
    if (source) next.set(source);
    return next;
  };
  let keys = sized(state?.keys, Float64Array, initial);
  let lengths = sized(state?.lengths, Int32Array, initial);
  let alive = sized(state?.alive, Uint8Array, initial);
  let sequenceStart = sized(state?.sequenceStart, Int32Array, initial);
  let groups = new Int32Array(initial);
  let baseSequence: Int32Array = state ? state.sequence : EMPTY;
  let baseSlots = slots;
  let tailSequence = new GrowableInt32(1024);
  /** Keys ascend with slots while `unordered` is undefined: a slot is found by binary search. */
  let unordered: Map<number, number> | undefined;
  let liveCount = 0;
  let totalLength = 0;
  for (let slot = 0; slot < slots; slot++) {
    if (slot > 0 && (keys[slot] as number) <= (keys[slot - 1] as number)) unordered = new Map();
    if (alive[slot] === 0) continue;
    liveCount += 1;
    totalLength += lengths[slot] as number;
  }
  if (unordered)
    for (let slot = 0; slot < slots; slot++) if (alive[slot]) unordered.set(keys[slot] as number, slot);
  /**
   * Per slot, interleaved: its BM25 length norm (even cells, valid while `normsValid`) and its score in the
   * search under way (odd cells, zero between searches). Side by side, one cache line serves both.
   */
  let cells = new Float32Array(keys.length * 2);
  let normsValid = false;
  let touched = new Int32Array(keys.length);
  let touchedCount = 0;
  /** Bitmaps of the allowed live slots for the group masks searched lately, most recent first. */
  let bitmaps: AllowedBitmap[] = [];
  /** Searches confined to groups so far (the clock of `used`). */
  let confinedSearches = 0;

  const grow = () => {
    const capacity = keys.length * 2;
    keys = sized(keys, Float64Array, capacity);
    lengths = sized(lengths, Int32Array, capacity);
    alive = sized(alive, Uint8Array, capacity);
    sequenceStart = sized(sequenceStart, Int32Array, capacity);
    groups = sized(groups, Int32Array, capacity);
    cells = new Float32Array(capacity * 2);
    normsValid = false;
    touched = new Int32Array(capacity);
    for (const bitmap of bitmaps) bitmap.bits = sized(bitmap.bits, Int32Array, (capacity >>> 5) + 1);
  };

  const slotOf = (key: number): number => {
    if (unordered) return unordered.get(key) ?? -1;
    let low = 0;
    let high = slots - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const found = keys[middle] as number;
      if (found === key) return alive[middle] === 1 ? middle : -1;
      if (found < key) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  };

  /**
   * Term ids by a hash of the term's characters (open addressing, id + 1 per cell), so that `addText` finds a
   * term inside the space-separated text without cutting it out as a string of its own.
   */
  let hashed = new Int32Array(1 << 12);
  const hashOf = (text: string, start: number, end: number): number => {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    return hash >>> 0;
  };
  const place = (id: number): void => {
    const term = termText[id] as string;
    const mask = hashed.length - 1;
    let cell = hashOf(term, 0, term.length) & mask;
    while (hashed[cell] !== 0) cell = (cell + 1) & mask;
    hashed[cell] = id + 1;
  };
  /** Sizes the table for the vocabulary (at most half full) and places every term. */
  const rehash = (): void => {
    let size = hashed.length;
    while ((termText.length + 1) * 2 > size) size *= 2;
    hashed = new Int32Array(size);
    for (let id = 0; id < termText.length; id++) place(id);
  };
  /** Places a term just added to `termText`. */
  const remember = (id: number): void => {
    if ((termText.length + 1) * 2 > hashed.length) rehash();
    else place(id);
  };
  rehash();

  const termId = (term: string): number => {
    let id = termIds.get(term);
    if (id === undefined) {
      id = termText.length;
      termIds.set(term, id);
      termText.push(term);
      // At least 1024: the df of a snapshot of an empty index is empty.
      if (id >= df.length) df = sized(df, Int32Array, Math.max(1024, df.length * 2));
      remember(id);
    }
    return id;
  };

  /** The id of the term `text[start, end)`, added if new. */
  const termIdIn = (text: string, start: number, end: number): number => {
    const mask = hashed.length - 1;
    let cell = hashOf(text, start, end) & mask;
    for (;;) {
      const entry = hashed[cell] as number;
      if (entry === 0) return termId(text.slice(start, end));
      const term = termText[entry - 1] as string;
      if (term.length === end - start && text.startsWith(term, start)) return entry - 1;
      cell = (cell + 1) & mask;
    }
  };

  /** Scratch for `distinctTerms`: a count per term id, and the ids seen, in order of first occurrence. */
  let termCounts = new Int32Array(1024);
  let seen = new Int32Array(256);

  /** Calls `visit` once per distinct term of `slot` with its frequency, in order of first occurrence. */
  const distinctTerms = (slot: number, visit: (id: number, tf: number) => void): void => {
    const data = slot < baseSlots ? baseSequence : tailSequence.data;
    const start = sequenceStart[slot] as number;
    const length = lengths[slot] as number;
    if (termCounts.length < termText.length) termCounts = new Int32Array(termText.length * 2);
    if (seen.length < length) seen = new Int32Array(length * 2);
    let distinct = 0;
    for (let p = start; p < start + length; p++) {
      const id = data[p] as number;
      if (termCounts[id] === 0) seen[distinct++] = id;
      termCounts[id] = (termCounts[id] as number) + 1;
    }
    for (let i = 0; i < distinct; i++) {
      const id = seen[i] as number;
      const tf = termCounts[id] as number;
      termCounts[id] = 0;
      visit(id, tf);
    }
  };

  const idf = (id: number) => {
    const n = df[id] ?? 0;
    return Math.log(1 + (liveCount - n + 0.5) / (n + 0.5));
  };

  const prepareNorms = (): void => {
    if (normsValid) return;
    const average = liveCount > 0 ? totalLength / liveCount : 1;
    for (let slot = 0; slot < slots; slot++) {
      cells[slot * 2] = params.k1 * (1 - params.b + (params.b * (lengths[slot] ?? 0)) / average);
    }
    normsValid = true;
  };

  const accumulateList = (
    data: Int32Array,
    from: number,
    to: number,
    factor: number,
    allowed: Int32Array | undefined,
  ) => {
    const out = cells;
    const seen = touched;
    let count = touchedCount;
    if (allowed !== undefined) {
      // Only allowed live slots are scored (the bitmap leaves removed ones out too).
      for (let i = from; i < to; i += 2) {
        const slot = data[i] as number;
        if (((allowed[slot >>> 5] as number) & (1 << (slot & 31))) === 0) continue;
        const tf = data[i + 1] as number;
        const cell = slot * 2;
        const previous = out[cell + 1] as number;
        if (previous === 0) seen[count++] = slot;
        out[cell + 1] = previous + (factor * tf) / (tf + (out[cell] as number));
      }
    } else if (liveCount === slots) {
      for (let i = from; i < to; i += 2) {
        const slot = data[i] as number;
        const tf = data[i + 1] as number;
        const cell = slot * 2;
        const previous = out[cell + 1] as number;
        if (previous === 0) seen[count++] = slot;
        out[cell + 1] = previous + (factor * tf) / (tf + (out[cell] as number));
      }
    } else {
      for (let i = from; i < to; i += 2) {
        const slot = data[i] as number;
        if (alive[slot] === 0) continue;
        const tf = data[i + 1] as number;
        const cell = slot * 2;
        const previous = out[cell + 1] as number;
        if (previous === 0) seen[count++] = slot;
        out[cell + 1] = previous + (factor * tf) / (tf + (out[cell] as number));
      }
    }
    touchedCount = count;
  };

  /**
   * Adds the BM25 contributions of `weights` into `scores`, noting newly touched slots (only the slots set in
   * `allowed`, when given).
   */
  const accumulate = (weights: ReadonlyMap<number, number>, allowed?: Int32Array): void => {
    prepareNorms();
    for (const [id, weight] of weights) {
      if (weight <= 0 || id >= termText.length) continue;
      const factor = weight * idf(id) * (params.k1 + 1);
      if (id + 1 < baseStart.length)
        accumulateList(basePostings, baseStart[id] as number, baseStart[id + 1] as number, factor, allowed);
      const tail = tails[id];
      if (tail) accumulateList(tail.data, 0, tail.length, factor, allowed);
    }
  };

  /**
   * The bitmap of the live slots in `mask`'s groups: kept from an earlier search, or made (one pass) unless every
   * bitmap kept is still in use (undefined: the search scores every passage and leaves other groups out at the
   * top-k, as before bitmaps).
   */
  const allowedSlots = (mask: Uint8Array): Int32Array | undefined => {
    const now = ++confinedSearches;
    const at = bitmaps.findIndex((bitmap) => sameGroups(bitmap.mask, mask));
    if (at >= 0) {
      const found = bitmaps[at] as AllowedBitmap;
      found.used = now;
      if (at > 0) bitmaps = [found, ...bitmaps.slice(0, at), ...bitmaps.slice(at + 1)];
      return found.bits;
    }
    const oldest = bitmaps.at(-1);
    if (bitmaps.length === ALLOWED_BITMAPS && oldest && now - oldest.used < BITMAP_COLD_AFTER)
      return undefined;
    const bits = new Int32Array((keys.length >>> 5) + 1);
    for (let slot = 0; slot < slots; slot++)
      if (alive[slot] === 1 && mask[groups[slot] as number] === 1)
        bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
    bitmaps = [{ mask: mask.slice(), bits, used: now }, ...bitmaps.slice(0, ALLOWED_BITMAPS - 1)];
    return bits;
  };

  const reset = () => {
    for (let i = 0; i < touchedCount; i++) cells[(touched[i] as number) * 2 + 1] = 0;
    touchedCount = 0;
  };

  /**
   * The best `limit` touched slots, by score then key; a binary heap of (slot, score) with no allocation per slot.
   * With `rescale`, every touched score is multiplied by it on the way (0 clears them: the search's last pass).
   * With `mask`, slots of groups it leaves out are passed over (a confined search without a bitmap).
   */
  const topK = (limit: number, rescale?: number, mask?: Uint8Array): LexicalHit[] => {
    const heap = new Int32Array(Math.max(1, limit));
    const heapScore = new Float64Array(Math.max(1, limit));
    let size = 0;
    // "(slot a, score sa) ranks below (b, sb)": lower score, or equal score and larger key.
    const below = (a: number, sa: number, b: number, sb: number) =>
      sa < sb || (sa === sb && (keys[a] as number) > (keys[b] as number));
    const place = (at: number, slot: number, score: number) => {
      heap[at] = slot;
      heapScore[at] = score;
    };
    // The heap's lowest score, kept in a local: most slots fall below it and are passed over at one compare.
    let floor = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i] as number;
      const score = cells[slot * 2 + 1] as number;
      if (rescale !== undefined) cells[slot * 2 + 1] = score * rescale;
      if (size === limit && score < floor) continue;
      if (mask !== undefined && mask[groups[slot] as number] !== 1) continue;
      if (size < limit) {
        let at = size++;
        while (at > 0) {
          const parent = (at - 1) >> 1;
          if (!below(slot, score, heap[parent] as number, heapScore[parent] as number)) break;
          place(at, heap[parent] as number, heapScore[parent] as number);
          at = parent;
        }
        place(at, slot, score);
        if (size === limit) floor = heapScore[0] as number;
      } else if (limit > 0 && below(heap[0] as number, heapScore[0] as number, slot, score)) {
        // Sift the newcomer down from the root.
        let at = 0;
        for (;;) {
          const left = at * 2 + 1;
          const right = left + 1;
          let lowest = -1;
          let lowestSlot = slot;
          let lowestScore = score;
          if (
            left < size &&
            below(heap[left] as number, heapScore[left] as number, lowestSlot, lowestScore)
          ) {
            lowest = left;
            lowestSlot = heap[left] as number;
            lowestScore = heapScore[left] as number;
          }
          if (
            right < size &&
            below(heap[right] as number, heapScore[right] as number, lowestSlot, lowestScore)
          )
            lowest = right;
          if (lowest < 0) break;
          place(at, heap[lowest] as number, heapScore[lowest] as number);
          at = lowest;
        }
        place(at, slot, score);
        floor = heapScore[0] as number;
      }
    }
    if (rescale === 0) touchedCount = 0;
    const out: LexicalHit[] = [];
    for (let i = 0; i < size; i++)
      out.push({ key: keys[heap[i] as number] as number, score: heapScore[i] as number });
    return out.sort((a, b) => b.score - a.score || a.key - b.key);
  };

  /** Adds a BM25-saturated score for query-term pairs found close together (Rasolofo & Savoy style). */
  const rerankByProximity = (weights: ReadonlyMap<number, number>, hits: LexicalHit[]): LexicalHit[] => {
    const terms = [...weights.keys()];
    if (params.proximityWeight <= 0 || terms.length < 2) return hits;
    const position = new Map<number, number>(terms.map((id, index) => [id, index]));
    const termWeight = terms.map((id) => idf(id) * (weights.get(id) ?? 0));
    prepareNorms();
    const window = params.proximityWindow;
    const last = new Float64Array(terms.length);
    const pair = new Float64Array(terms.length * terms.length);
    const reranked = hits.map((hit) => {
      const slot = slotOf(hit.key);
      const data = slot < baseSlots ? baseSequence : tailSequence.data;
      const start = sequenceStart[slot] as number;
      last.fill(Number.NEGATIVE_INFINITY);
      pair.fill(0);
      for (let p = start; p < start + (lengths[slot] as number); p++) {
        const index = position.get(data[p] as number);
        if (index === undefined) continue;
        // Distances are counted from the passage start, as positions are.
        const at = p - start;
        for (let other = 0; other < terms.length; other++) {
          const distance = at - (last[other] as number);
          if (other !== index && distance <= window) {
            const cell = Math.min(index, other) * terms.length + Math.max(index, other);
            pair[cell] = (pair[cell] as number) + 1 / (distance * distance);
          }
        }
        last[index] = at;
      }
      let bonus = 0;
      for (let a = 0; a < terms.length; a++) {
        for (let b = a + 1; b < terms.length; b++) {
          const tpi = pair[a * terms.length + b] as number;
          if (tpi > 0) {
            const weight = Math.min(termWeight[a] as number, termWeight[b] as number);
            bonus += (weight * tpi * (params.k1 + 1)) / (tpi + (cells[slot * 2] as number));
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
    const take = (slot: number, share: number) => {
      const docWeight = share / Math.max(1, lengths[slot] as number);
      distinctTerms(slot, (id, tf) => {
        // Near-stopwords carry almost no evidence and have the longest postings: leave them out.
        if ((df[id] ?? 0) > maxDf) return;
        candidate.set(id, (candidate.get(id) ?? 0) + docWeight * tf);
      });
    };
    for (const hit of top) {
      const slot = slotOf(hit.key);
      if (slot < 0) continue;
      take(slot, hit.score / total);
    }
    const chosen = [...candidate].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, params.feedbackTerms);
    const chosenSum = chosen.reduce((sum, [, weight]) => sum + weight, 0);
    const originalSum = [...original.values()].reduce((sum, weight) => sum + weight, 0);
    if (chosenSum <= 0 || originalSum <= 0) return undefined;
    const added = new Map<number, number>();
    for (const [id, weight] of chosen) added.set(id, ((1 - params.originalWeight) * weight) / chosenSum);
    return { originalFactor: params.originalWeight / originalSum, added };
  };

  const compact = () => {
    if (slots === baseSlots && tails.length === 0) return;
    const terms = termText.length;
    // Postings of removed passages are dropped here; their slots stay (dead) so slot numbers hold.
    const counts = new Int32Array(terms + 1);
    for (let id = 0; id < terms; id++) {
      let count = 0;
      if (id + 1 < baseStart.length) {
        for (let i = baseStart[id] as number; i < (baseStart[id + 1] as number); i += 2)
          if (alive[basePostings[i] as number] === 1) count += 2;
      }
      const tail = tails[id];
      if (tail) for (let i = 0; i < tail.length; i += 2) if (alive[tail.data[i] as number] === 1) count += 2;
      counts[id + 1] = (counts[id] as number) + count;
    }
    const postings = new Int32Array(counts[terms] as number);
    for (let id = 0; id < terms; id++) {
      let at = counts[id] as number;
      const copy = (data: Int32Array, from: number, to: number) => {
        for (let i = from; i < to; i += 2) {
          if (alive[data[i] as number] !== 1) continue;
          postings[at++] = data[i] as number;
          postings[at++] = data[i + 1] as number;
        }
      };
      if (id + 1 < baseStart.length) copy(basePostings, baseStart[id] as number, baseStart[id + 1] as number);
      const tail = tails[id];
      if (tail) copy(tail.data, 0, tail.length);
    }
    const sequence = new Int32Array(baseSequence.length + tailSequence.length);
    sequence.set(baseSequence);
    sequence.set(tailSequence.data.subarray(0, tailSequence.length), baseSequence.length);
    for (let slot = baseSlots; slot < slots; slot++)
      sequenceStart[slot] = (sequenceStart[slot] as number) + baseSequence.length;
    baseStart = counts;
    basePostings = postings;
    baseSequence = sequence;
    baseSlots = slots;
    tails = [];
    tailSequence = new GrowableInt32(1024);
  };

  /** A new slot for `key`, its terms to be pushed onto the tail sequence before `close`. */
  const open = (key: number): number => {
    if (slotOf(key) >= 0) throw new Error(`lexical index already holds key ${key}`);
    if (slots === keys.length) grow();
    const slot = slots++;
    if (!unordered && slot > 0 && key <= (keys[slot - 1] as number)) {
      unordered = new Map();
      for (let other = 0; other < slot; other++)
        if (alive[other]) unordered.set(keys[other] as number, other);
    }
    sequenceStart[slot] = tailSequence.length;
    return slot;
  };

  const close = (slot: number, key: number, length: number, group: number): void => {
    keys[slot] = key;
    groups[slot] = group;
    lengths[slot] = length;
    alive[slot] = 1;
    for (const { mask, bits } of bitmaps)
      if (mask[group] === 1) bits[slot >>> 5] = (bits[slot >>> 5] as number) | (1 << (slot & 31));
    unordered?.set(key, slot);
    distinctTerms(slot, (id, tf) => {
      let tail = tails[id];
      if (!tail) {
        tail = new GrowableInt32();
        tails[id] = tail;
      }
      tail.push(slot);
      tail.push(Math.min(tf, 0xffff));
      df[id] = (df[id] as number) + 1;
    });
    liveCount += 1;
    totalLength += length;
    normsValid = false;
  };

  return {
    get size() {
      return liveCount;
    },
    get dead() {
      return slots - liveCount;
    },
    has: (key) => slotOf(key) >= 0,
    add(key, terms, group = 0) {
      const slot = open(key);
      for (const term of terms) tailSequence.push(termId(term));
      close(slot, key, terms.length, group);
    },
    addText(key, text, group = 0) {
      const slot = open(key);
      let count = 0;
      // Exactly the terms of text.split(" ") (none for ""), found in place.
      if (text.length > 0) {
        let start = 0;
        for (;;) {
          const space = text.indexOf(" ", start);
          const end = space < 0 ? text.length : space;
          tailSequence.push(termIdIn(text, start, end));
          count += 1;
          if (space < 0) break;
          start = space + 1;
        }
      }
      close(slot, key, count, group);
    },
    remove(key) {
      const slot = slotOf(key);
      if (slot < 0) return false;
      unordered?.delete(key);
      alive[slot] = 0;
      for (const { bits } of bitmaps) bits[slot >>> 5] = (bits[slot >>> 5] as number) & ~(1 << (slot & 31));
      distinctTerms(slot, (id) => {
        df[id] = (df[id] as number) - 1;
      });
      liveCount -= 1;
      totalLength -= lengths[slot] as number;
      normsValid = false;
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
      let hits: LexicalHit[];
      let originalFactor = 1;
      // Confined to groups with a bitmap, only the allowed passages are scored: every touched slot is a candidate.
      const allowed = options.groups === undefined ? undefined : allowedSlots(options.groups);
      const mask = allowed === undefined ? options.groups : undefined;
      try {
        accumulate(weights, allowed);
        if (options.feedback !== false && params.feedbackDocs > 0) {
          // The second pass reuses the first: its scores are scaled for the expanded query while the feedback
          // passages are picked (by the unscaled scores), then only the expansion terms' postings are added.
          const scale =
            params.originalWeight / [...weights.values()].reduce((sum, weight) => sum + weight, 0);
          const rm3 = expansion(weights, topK(params.feedbackDocs, scale, mask));
          if (rm3) {
            originalFactor = rm3.originalFactor;
            accumulate(rm3.added, allowed);
          } else {
            // No expansion after all (rare): the first pass again, unscaled.
            reset();
            accumulate(weights, allowed);
          }
        }
        hits = topK(depth, 0, mask);
      } finally {
        reset();
      }
      // Proximity counts pairs of the user's own terms, weighted as in the final query.
      const original = new Map([...weights].map(([id, weight]) => [id, weight * originalFactor]));
      const reranked = options.proximityDepth ?? hits.length;
      if (reranked >= hits.length) return rerankByProximity(original, hits).slice(0, options.limit);
      // Proximity only adds to a score, so the re-ranked head stays above the tail.
      return [...rerankByProximity(original, hits.slice(0, reranked)), ...hits.slice(reranked)].slice(
        0,
        options.limit,
      );
    },
    windowScores(query, windows, weights) {
      // Query terms numbered 0..n-1 with their weights; each passage's counts of them are read once, however many
      // windows hold it (a turn is in the windows of up to ten others).
      const column = new Map<number, number>();
      const termWeights: number[] = [];
      for (const [term, weight] of query) {
        const id = termIds.get(term);
        if (id === undefined || (df[id] ?? 0) <= 0 || weight <= 0) continue;
        let at = column.get(id);
        if (at === undefined) {
          at = termWeights.length;
          column.set(id, at);
          termWeights.push(0);
        }
        termWeights[at] = (termWeights[at] as number) + weight * idf(id);
      }
      const n = termWeights.length;
      const average = liveCount > 0 ? totalLength / liveCount : 1;
      const counted = new Map<number, { length: number; counts: Float64Array | undefined } | null>();
      const countsOf = (key: number) => {
        let entry = counted.get(key);
        if (entry === undefined) {
          const slot = slotOf(key);
          if (slot < 0) entry = null;
          else {
            const data = slot < baseSlots ? baseSequence : tailSequence.data;
            const start = sequenceStart[slot] as number;
            const length = lengths[slot] as number;
            let counts: Float64Array | undefined;
            for (let p = start; p < start + length; p++) {
              const at = column.get(data[p] as number);
              if (at === undefined) continue;
              counts ??= new Float64Array(n);
              counts[at] = (counts[at] as number) + 1;
            }
            entry = { length, counts };
          }
          counted.set(key, entry);
        }
        return entry;
      };
      const tf = new Float64Array(n);
      return windows.map((window, w) => {
        if (n === 0) return 0;
        tf.fill(0);
        let length = 0;
        let passages = 0;
        const shares = weights?.[w];
        for (let i = 0; i < window.length; i++) {
          const share = shares?.[i] ?? 1;
          if (share <= 0) continue;
          const entry = countsOf(window[i] as number);
          if (!entry) continue;
          passages += share;
          length += share * entry.length;
          const counts = entry.counts;
          if (counts)
            for (let at = 0; at < n; at++) tf[at] = (tf[at] as number) + share * (counts[at] as number);
        }
        const norm = params.k1 * (1 - params.b + (params.b * length) / (average * Math.max(1, passages)));
        let score = 0;
        for (let at = 0; at < n; at++) {
          const count = tf[at] as number;
          if (count > 0) score += ((termWeights[at] as number) * count * (params.k1 + 1)) / (count + norm);
        }
        return score;
      });
    },
    compact,
    state() {
      compact();
      return {
        terms: termText.slice(),
        keys: keys.slice(0, slots),
        alive: alive.slice(0, slots),
        lengths: lengths.slice(0, slots),
        sequenceStart: sequenceStart.slice(0, slots),
        sequence: baseSequence,
        termStart: baseStart,
        postings: basePostings,
        df: df.slice(0, termText.length),
      };
    },
  };
}
