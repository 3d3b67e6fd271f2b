// BM25 over the lexical index's data: per-slot scores accumulated from postings into `cells`, the best slots taken
// with a heap, and the scores cleared for the next search.
import { type LexicalData, largeTf } from "./lexical-data.js";
import type { LexicalHit } from "./lexical-index.js";
import { TF_BITS, TF_ESCAPE } from "./packed-arrays.js";

/** The BM25 idf of term `id` among the live passages. */
export function idf(data: LexicalData, id: number): number {
  const n = data.df[id] ?? 0;
  return Math.log(1 + (data.liveCount - n + 0.5) / (n + 0.5));
}

/** Fills each slot's length norm (the even cells) unless they are still valid. */
export function prepareNorms(data: LexicalData): void {
  if (data.normsValid) return;
  const { cells, lengths } = data;
  const { k1, b } = data.params;
  const average = data.liveCount > 0 ? data.totalLength / data.liveCount : 1;
  for (let slot = 0; slot < data.slots; slot++) {
    cells[slot * 2] = k1 * (1 - b + (b * (lengths[slot] ?? 0)) / average);
  }
  data.normsValid = true;
}

/**
 * Adds the BM25 contributions of `weights` (term id → weight) into the slots' scores, noting newly touched slots
 * (only the slots set in `allowed`, when given).
 */
export function accumulate(
  data: LexicalData,
  weights: ReadonlyMap<number, number>,
  allowed?: Int32Array,
): void {
  prepareNorms(data);
  const { baseStart, basePostings, tails } = data;
  for (const [id, weight] of weights) {
    if (weight <= 0 || id >= data.vocabulary.text.length) continue;
    const factor = weight * idf(data, id) * (data.params.k1 + 1);
    if (id + 1 < baseStart.length)
      accumulateList(
        data,
        id,
        basePostings,
        baseStart[id] as number,
        baseStart[id + 1] as number,
        factor,
        allowed,
      );
    const tail = tails[id];
    if (tail) accumulateList(data, id, tail.data, 0, tail.length, factor, allowed);
  }
}

/** Adds `factor`-weighted saturated tfs of term `id`'s postings `list[from, to)` into the scores of their slots. */
function accumulateList(
  data: LexicalData,
  id: number,
  list: Int32Array,
  from: number,
  to: number,
  factor: number,
  allowed: Int32Array | undefined,
): void {
  // Only allowed live slots are scored (the bitmap leaves removed ones out too).
  if (allowed !== undefined) data.touchedCount = accumulateAllowed(data, id, list, from, to, factor, allowed);
  else if (data.liveCount === data.slots) data.touchedCount = accumulateAll(data, id, list, from, to, factor);
  else data.touchedCount = accumulateAlive(data, id, list, from, to, factor);
}

// The three loops below are the search's inner loop: each reads the arrays it needs into locals once (no property
// read per posting) and returns the new count of touched slots. A tf field at TF_ESCAPE (a term 127 or more times in
// one passage: rare) is looked up.

function accumulateAll(
  data: LexicalData,
  id: number,
  list: Int32Array,
  from: number,
  to: number,
  factor: number,
): number {
  const { cells, touched } = data;
  let count = data.touchedCount;
  for (let i = from; i < to; i++) {
    const posting = list[i] as number;
    const slot = posting >>> TF_BITS;
    let tf = posting & TF_ESCAPE;
    if (tf === TF_ESCAPE) tf = largeTf(data, id, slot);
    const cell = slot * 2;
    const previous = cells[cell + 1] as number;
    if (previous === 0) touched[count++] = slot;
    cells[cell + 1] = previous + (factor * tf) / (tf + (cells[cell] as number));
  }
  return count;
}

function accumulateAlive(
  data: LexicalData,
  id: number,
  list: Int32Array,
  from: number,
  to: number,
  factor: number,
): number {
  const { cells, touched, alive } = data;
  let count = data.touchedCount;
  for (let i = from; i < to; i++) {
    const posting = list[i] as number;
    const slot = posting >>> TF_BITS;
    if (alive[slot] === 0) continue;
    let tf = posting & TF_ESCAPE;
    if (tf === TF_ESCAPE) tf = largeTf(data, id, slot);
    const cell = slot * 2;
    const previous = cells[cell + 1] as number;
    if (previous === 0) touched[count++] = slot;
    cells[cell + 1] = previous + (factor * tf) / (tf + (cells[cell] as number));
  }
  return count;
}

function accumulateAllowed(
  data: LexicalData,
  id: number,
  list: Int32Array,
  from: number,
  to: number,
  factor: number,
  allowed: Int32Array,
): number {
  const { cells, touched } = data;
  let count = data.touchedCount;
  for (let i = from; i < to; i++) {
    const posting = list[i] as number;
    const slot = posting >>> TF_BITS;
    if (((allowed[slot >>> 5] as number) & (1 << (slot & 31))) === 0) continue;
    let tf = posting & TF_ESCAPE;
    if (tf === TF_ESCAPE) tf = largeTf(data, id, slot);
    const cell = slot * 2;
    const previous = cells[cell + 1] as number;
    if (previous === 0) touched[count++] = slot;
    cells[cell + 1] = previous + (factor * tf) / (tf + (cells[cell] as number));
  }
  return count;
}

/** Clears the scores of the search under way. */
export function resetScores(data: LexicalData): void {
  const { cells, touched } = data;
  for (let i = 0; i < data.touchedCount; i++) cells[(touched[i] as number) * 2 + 1] = 0;
  data.touchedCount = 0;
}

/** Best first: higher score, then smaller key. */
export function byScore(a: LexicalHit, b: LexicalHit): number {
  return b.score - a.score || a.key - b.key;
}

/** A bounded min-heap of (slot, score): its root is the worst of the best kept so far. */
interface Heap {
  slots: Int32Array;
  scores: Float64Array;
  size: number;
  keys: Float64Array;
}

/** "(slot a, score sa) ranks below (b, sb)": lower score, or equal score and larger key. */
function below(keys: Float64Array, a: number, sa: number, b: number, sb: number): boolean {
  return sa < sb || (sa === sb && (keys[a] as number) > (keys[b] as number));
}

/** Adds (slot, score) to a heap with room for it. */
function heapPush(heap: Heap, slot: number, score: number): void {
  const { slots, scores, keys } = heap;
  let at = heap.size++;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!below(keys, slot, score, slots[parent] as number, scores[parent] as number)) break;
    slots[at] = slots[parent] as number;
    scores[at] = scores[parent] as number;
    at = parent;
  }
  slots[at] = slot;
  scores[at] = score;
}

/** Replaces the root with (slot, score), which ranks above it, and sifts it down. */
function heapReplaceRoot(heap: Heap, slot: number, score: number): void {
  const { slots, scores, keys, size } = heap;
  let at = 0;
  for (;;) {
    const left = at * 2 + 1;
    const right = left + 1;
    let lowest = -1;
    let lowestSlot = slot;
    let lowestScore = score;
    if (left < size && below(keys, slots[left] as number, scores[left] as number, lowestSlot, lowestScore)) {
      lowest = left;
      lowestSlot = slots[left] as number;
      lowestScore = scores[left] as number;
    }
    if (right < size && below(keys, slots[right] as number, scores[right] as number, lowestSlot, lowestScore))
      lowest = right;
    if (lowest < 0) break;
    slots[at] = slots[lowest] as number;
    scores[at] = scores[lowest] as number;
    at = lowest;
  }
  slots[at] = slot;
  scores[at] = score;
}

/**
 * The best `limit` touched slots, by score then key; a binary heap of (slot, score) with no allocation per slot.
 * With `rescale`, every touched score is multiplied by it on the way (0 clears them: the search's last pass).
 * With `mask`, slots of groups it leaves out are passed over (a confined search without a bitmap).
 */
export function topK(data: LexicalData, limit: number, rescale?: number, mask?: Uint8Array): LexicalHit[] {
  const { cells, touched, groups, keys } = data;
  const heap: Heap = {
    slots: new Int32Array(Math.max(1, limit)),
    scores: new Float64Array(Math.max(1, limit)),
    size: 0,
    keys,
  };
  // The heap's lowest score, kept in a local: most slots fall below it and are passed over at one compare.
  let floor = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < data.touchedCount; i++) {
    const slot = touched[i] as number;
    const score = cells[slot * 2 + 1] as number;
    if (rescale !== undefined) cells[slot * 2 + 1] = score * rescale;
    if (heap.size === limit && score < floor) continue;
    if (mask !== undefined && mask[groups[slot] as number] !== 1) continue;
    if (heap.size < limit) {
      heapPush(heap, slot, score);
      if (heap.size === limit) floor = heap.scores[0] as number;
    } else if (limit > 0 && below(keys, heap.slots[0] as number, heap.scores[0] as number, slot, score)) {
      heapReplaceRoot(heap, slot, score);
      floor = heap.scores[0] as number;
    }
  }
  if (rescale === 0) data.touchedCount = 0;
  const out: LexicalHit[] = [];
  for (let i = 0; i < heap.size; i++)
    out.push({ key: keys[heap.slots[i] as number] as number, score: heap.scores[i] as number });
  return out.sort(byScore);
}
