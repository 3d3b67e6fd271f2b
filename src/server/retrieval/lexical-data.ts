// The lexical index's state as one record, and the functions that change it: slots, term sequences, postings.
//
// Layout: a compact base (one flat postings array per index, term ranges by offset; one flat term sequence per
// passage) that a snapshot can restore without copying, and growable tails for passages added since. A passage's
// distinct terms and their frequencies are read from its sequence when needed (feedback, removal).
import { type AllowedBitmap, markAllowed, unmarkAllowed } from "./allowed-bitmaps.js";
import type { LexicalParams, LexicalState } from "./lexical-index.js";
import { addTerm, createVocabulary, findTermIn, type Vocabulary } from "./lexical-vocabulary.js";

/** An Int32Array that doubles when full; `data` past `length` is spare room. */
export class GrowableInt32 {
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

const EMPTY = new Int32Array(0);

/** A new array of `size` cells starting with `source`'s (which must fit). */
export function resized<T extends Float64Array | Uint8Array | Int32Array>(
  source: T | undefined,
  make: new (n: number) => T,
  size: number,
): T {
  const next = new make(size);
  if (source) next.set(source);
  return next;
}

/**
 * Everything a lexical index holds. Per slot (a passage, numbered in order of addition; removed ones stay, dead,
 * so slot numbers hold): key, length, alive, group and where its term sequence starts (in the base sequence
 * below `baseSlots`, else in the tail). Per term id: its df and its postings, interleaved (slot, tf) pairs,
 * in the base at `basePostings[baseStart[t] .. baseStart[t + 1])` and then in `tails[t]`.
 */
export interface LexicalData {
  readonly params: LexicalParams;
  vocabulary: Vocabulary;
  /** Live passages holding each term. */
  df: Int32Array;
  baseStart: Int32Array;
  basePostings: Int32Array;
  tails: (GrowableInt32 | undefined)[];
  /** Slots in use (live or dead); the per-slot arrays below have room for more. */
  slots: number;
  baseSlots: number;
  keys: Float64Array;
  lengths: Int32Array;
  alive: Uint8Array;
  sequenceStart: Int32Array;
  /** Each slot's group (kept by a snapshot). */
  groups: Int32Array;
  baseSequence: Int32Array;
  tailSequence: GrowableInt32;
  /** Keys ascend with slots while this is undefined: a slot is found by binary search. */
  unordered: Map<number, number> | undefined;
  liveCount: number;
  totalLength: number;
  /**
   * Per slot, interleaved: its BM25 length norm (even cells, valid while `normsValid`) and its score in the
   * search under way (odd cells, zero between searches). Side by side, one cache line serves both.
   */
  cells: Float32Array;
  normsValid: boolean;
  /** The slots scored so far in the search under way (`touchedCount` of them). */
  touched: Int32Array;
  touchedCount: number;
  /** Bitmaps of the allowed live slots for the group masks searched lately, most recent first. */
  bitmaps: AllowedBitmap[];
  /** Searches confined to groups so far (the clock of a bitmap's `used`). */
  confinedSearches: number;
  /** Scratch for `distinctTerms`: a count per term id, and the ids seen, in order of first occurrence. */
  termCounts: Int32Array;
  seen: Int32Array;
}

/** An empty index's data, or one restored from `state` (whose flat arrays it keeps without copying). */
export function createLexicalData(params: LexicalParams, state?: LexicalState): LexicalData {
  const slots = state ? state.keys.length : 0;
  const initial = Math.max(1024, slots);
  const data: LexicalData = {
    params,
    vocabulary: createVocabulary(state ? state.terms : []),
    // Copied: a view would keep the whole snapshot buffer alive after the next compaction replaced the rest.
    df: state ? state.df.slice() : new Int32Array(1024),
    baseStart: state ? state.termStart : new Int32Array(1),
    basePostings: state ? state.postings : EMPTY,
    tails: [],
    slots,
    baseSlots: slots,
    keys: resized(state?.keys, Float64Array, initial),
    lengths: resized(state?.lengths, Int32Array, initial),
    alive: resized(state?.alive, Uint8Array, initial),
    sequenceStart: resized(state?.sequenceStart, Int32Array, initial),
    groups:
      state && state.groups.length > 0 ? resized(state.groups, Int32Array, initial) : new Int32Array(initial),
    baseSequence: state ? state.sequence : EMPTY,
    tailSequence: new GrowableInt32(1024),
    unordered: undefined,
    liveCount: 0,
    totalLength: 0,
    cells: new Float32Array(initial * 2),
    normsValid: false,
    touched: new Int32Array(initial),
    touchedCount: 0,
    bitmaps: [],
    confinedSearches: 0,
    termCounts: new Int32Array(1024),
    seen: new Int32Array(256),
  };
  countRestored(data);
  return data;
}

/** Live count and total length of restored slots; a key map if their keys do not ascend. */
function countRestored(data: LexicalData): void {
  const { keys, alive, lengths } = data;
  let ordered = true;
  for (let slot = 0; slot < data.slots; slot++) {
    if (slot > 0 && (keys[slot] as number) <= (keys[slot - 1] as number)) ordered = false;
    if (alive[slot] === 0) continue;
    data.liveCount += 1;
    data.totalLength += lengths[slot] as number;
  }
  if (!ordered) data.unordered = liveKeyMap(data, data.slots);
}

/** Key to slot for the live slots below `end`. */
function liveKeyMap(data: LexicalData, end: number): Map<number, number> {
  const map = new Map<number, number>();
  for (let slot = 0; slot < end; slot++) if (data.alive[slot]) map.set(data.keys[slot] as number, slot);
  return map;
}

/** Doubles the room of every per-slot array (scores and norms start afresh). */
function grow(data: LexicalData): void {
  const capacity = data.keys.length * 2;
  data.keys = resized(data.keys, Float64Array, capacity);
  data.lengths = resized(data.lengths, Int32Array, capacity);
  data.alive = resized(data.alive, Uint8Array, capacity);
  data.sequenceStart = resized(data.sequenceStart, Int32Array, capacity);
  data.groups = resized(data.groups, Int32Array, capacity);
  data.cells = new Float32Array(capacity * 2);
  data.normsValid = false;
  data.touched = new Int32Array(capacity);
  for (const bitmap of data.bitmaps) bitmap.bits = resized(bitmap.bits, Int32Array, (capacity >>> 5) + 1);
}

/** The live slot of `key`, or -1. */
export function slotOf(data: LexicalData, key: number): number {
  if (data.unordered) return data.unordered.get(key) ?? -1;
  const { keys } = data;
  let low = 0;
  let high = data.slots - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const found = keys[middle] as number;
    if (found === key) return data.alive[middle] === 1 ? middle : -1;
    if (found < key) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** The array holding `slot`'s term sequence (from `sequenceStart[slot]`, `lengths[slot]` long). */
export function sequenceOf(data: LexicalData, slot: number): Int32Array {
  return slot < data.baseSlots ? data.baseSequence : data.tailSequence.data;
}

/** The id of `term`, added if new. */
export function termId(data: LexicalData, term: string): number {
  const known = data.vocabulary.ids.get(term);
  if (known !== undefined) return known;
  const id = addTerm(data.vocabulary, term);
  // At least 1024: the df of a snapshot of an empty index is empty.
  if (id >= data.df.length) data.df = resized(data.df, Int32Array, Math.max(1024, data.df.length * 2));
  return id;
}

/** The id of the term `text[start, end)`, added if new. */
function termIdIn(data: LexicalData, text: string, start: number, end: number): number {
  const id = findTermIn(data.vocabulary, text, start, end);
  return id >= 0 ? id : termId(data, text.slice(start, end));
}

/** Calls `visit` once per distinct term of `slot` with its frequency, in order of first occurrence. */
export function distinctTerms(
  data: LexicalData,
  slot: number,
  visit: (id: number, tf: number) => void,
): void {
  const sequence = sequenceOf(data, slot);
  const start = data.sequenceStart[slot] as number;
  const length = data.lengths[slot] as number;
  if (data.termCounts.length < data.vocabulary.text.length)
    data.termCounts = new Int32Array(data.vocabulary.text.length * 2);
  if (data.seen.length < length) data.seen = new Int32Array(length * 2);
  const { termCounts, seen } = data;
  let distinct = 0;
  for (let p = start; p < start + length; p++) {
    const id = sequence[p] as number;
    if (termCounts[id] === 0) seen[distinct++] = id;
    termCounts[id] = (termCounts[id] as number) + 1;
  }
  for (let i = 0; i < distinct; i++) {
    const id = seen[i] as number;
    const tf = termCounts[id] as number;
    termCounts[id] = 0;
    visit(id, tf);
  }
}

/** Adds a passage of `terms` under `key` (which must be new) in `group`. */
export function addPassage(data: LexicalData, key: number, terms: readonly string[], group: number): void {
  const slot = openSlot(data, key);
  for (const term of terms) data.tailSequence.push(termId(data, term));
  closeSlot(data, slot, key, terms.length, group);
}

/** Adds a passage of the terms of `text.split(" ")` (none for ""), found in place. */
export function addPassageText(data: LexicalData, key: number, text: string, group: number): void {
  const slot = openSlot(data, key);
  let count = 0;
  if (text.length > 0) {
    let start = 0;
    for (;;) {
      const space = text.indexOf(" ", start);
      const end = space < 0 ? text.length : space;
      data.tailSequence.push(termIdIn(data, text, start, end));
      count += 1;
      if (space < 0) break;
      start = space + 1;
    }
  }
  closeSlot(data, slot, key, count, group);
}

/** A new slot for `key`, its terms to be pushed onto the tail sequence before `closeSlot`. */
function openSlot(data: LexicalData, key: number): number {
  if (slotOf(data, key) >= 0) throw new Error(`lexical index already holds key ${key}`);
  if (data.slots === data.keys.length) grow(data);
  const slot = data.slots++;
  if (!data.unordered && slot > 0 && key <= (data.keys[slot - 1] as number))
    data.unordered = liveKeyMap(data, slot);
  data.sequenceStart[slot] = data.tailSequence.length;
  return slot;
}

/** Makes `slot` live with the `length` terms just pushed: its postings, df and statistics. */
function closeSlot(data: LexicalData, slot: number, key: number, length: number, group: number): void {
  data.keys[slot] = key;
  data.groups[slot] = group;
  data.lengths[slot] = length;
  data.alive[slot] = 1;
  markAllowed(data.bitmaps, slot, group);
  data.unordered?.set(key, slot);
  distinctTerms(data, slot, (id, tf) => {
    let tail = data.tails[id];
    if (!tail) {
      tail = new GrowableInt32();
      data.tails[id] = tail;
    }
    tail.push(slot);
    tail.push(Math.min(tf, 0xffff));
    data.df[id] = (data.df[id] as number) + 1;
  });
  data.liveCount += 1;
  data.totalLength += length;
  data.normsValid = false;
}

/** Marks `key`'s passage dead (its postings stay until compaction); false if there is none. */
export function removePassage(data: LexicalData, key: number): boolean {
  const slot = slotOf(data, key);
  if (slot < 0) return false;
  data.unordered?.delete(key);
  data.alive[slot] = 0;
  unmarkAllowed(data.bitmaps, slot);
  distinctTerms(data, slot, (id) => {
    data.df[id] = (data.df[id] as number) - 1;
  });
  data.liveCount -= 1;
  data.totalLength -= data.lengths[slot] as number;
  data.normsValid = false;
  return true;
}

/** Folds passages added since the last compaction into the flat base arrays (one copy; frees the tails). */
export function compactData(data: LexicalData): void {
  if (data.slots === data.baseSlots && data.tails.length === 0) return;
  // Postings of removed passages are dropped here; their slots stay (dead) so slot numbers hold.
  const starts = livePostingStarts(data);
  data.basePostings = livePostings(data, starts);
  data.baseStart = starts;
  data.baseSequence = mergedSequence(data);
  data.baseSlots = data.slots;
  data.tails = [];
  data.tailSequence = new GrowableInt32(1024);
}

/** Calls `visit` with each of term `id`'s postings lists: its base range, then its tail. */
function postingLists(
  data: LexicalData,
  id: number,
  visit: (list: Int32Array, from: number, to: number) => void,
): void {
  const { baseStart } = data;
  if (id + 1 < baseStart.length)
    visit(data.basePostings, baseStart[id] as number, baseStart[id + 1] as number);
  const tail = data.tails[id];
  if (tail) visit(tail.data, 0, tail.length);
}

/** Per term id, where its live postings start in the compacted array (one more cell: the total). */
function livePostingStarts(data: LexicalData): Int32Array {
  const terms = data.vocabulary.text.length;
  const { alive } = data;
  const starts = new Int32Array(terms + 1);
  for (let id = 0; id < terms; id++) {
    let count = 0;
    postingLists(data, id, (list, from, to) => {
      for (let i = from; i < to; i += 2) if (alive[list[i] as number] === 1) count += 2;
    });
    starts[id + 1] = (starts[id] as number) + count;
  }
  return starts;
}

/** The live postings of every term, base then tail, laid out at `starts`. */
function livePostings(data: LexicalData, starts: Int32Array): Int32Array {
  const terms = starts.length - 1;
  const { alive } = data;
  const postings = new Int32Array(starts[terms] as number);
  for (let id = 0; id < terms; id++) {
    let at = starts[id] as number;
    postingLists(data, id, (list, from, to) => {
      for (let i = from; i < to; i += 2) {
        if (alive[list[i] as number] !== 1) continue;
        postings[at++] = list[i] as number;
        postings[at++] = list[i + 1] as number;
      }
    });
  }
  return postings;
}

/** The base sequence followed by the tail's, with the tail slots' starts moved to match. */
function mergedSequence(data: LexicalData): Int32Array {
  const { baseSequence, tailSequence, sequenceStart } = data;
  const sequence = new Int32Array(baseSequence.length + tailSequence.length);
  sequence.set(baseSequence);
  sequence.set(tailSequence.data.subarray(0, tailSequence.length), baseSequence.length);
  for (let slot = data.baseSlots; slot < data.slots; slot++)
    sequenceStart[slot] = (sequenceStart[slot] as number) + baseSequence.length;
  return sequence;
}

/** The content as flat arrays (compacts first). Arrays that later changes mutate are copies. */
export function snapshotOf(data: LexicalData): LexicalState {
  compactData(data);
  return {
    terms: data.vocabulary.text.slice(),
    keys: data.keys.slice(0, data.slots),
    alive: data.alive.slice(0, data.slots),
    lengths: data.lengths.slice(0, data.slots),
    sequenceStart: data.sequenceStart.slice(0, data.slots),
    sequence: data.baseSequence,
    termStart: data.baseStart,
    postings: data.basePostings,
    df: data.df.slice(0, data.vocabulary.text.length),
    groups: data.groups.subarray(0, data.slots).some((group) => group !== 0)
      ? data.groups.slice(0, data.slots)
      : new Int32Array(0),
  };
}
