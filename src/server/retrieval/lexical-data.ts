// The lexical index's state as one record, and the functions that change it: slots, term sequences, postings.
//
// Layout: a compact base (one flat postings array per index, term ranges by offset; one flat term sequence per
// passage) that a snapshot can restore without copying, and growable tails for passages added since. A passage's
// distinct terms and their frequencies are read from its sequence when needed (feedback, removal). Both arrays are
// packed (packed-arrays.ts): a posting is one int32, a term in a sequence one to four bytes.
import { type AllowedBitmap, markAllowed, unmarkAllowed } from "./allowed-bitmaps.js";
import type { LexicalParams, LexicalState } from "./lexical-index.js";
import {
  addTerm,
  createVocabulary,
  findHashedTermIn,
  HASH_SEED,
  hashStep,
  type Vocabulary,
} from "./lexical-vocabulary.js";
import {
  decodeTerms,
  GrowableInt32,
  GrowableTerms,
  MAX_SLOTS,
  MAX_TERM_ID,
  packPosting,
  TF_BITS,
  TF_ESCAPE,
} from "./packed-arrays.js";

const EMPTY = new Int32Array(0);
const NO_BYTES = new Uint8Array(0);
const SPACE = 0x20;

/** A new array of `size` cells starting with `source`'s (which must fit). */
export function resized<T extends Float64Array | Uint8Array | Int32Array | Uint32Array>(
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
 * so slot numbers hold): key, length, alive, group and where its term sequence starts (a byte offset in the base
 * sequence below `baseSlots`, else in the tail). Per term id: its df and its postings (`packPosting`), in the base
 * at `basePostings[baseStart[t] .. baseStart[t + 1])` and then in `tails[t]`.
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
  sequenceStart: Uint32Array;
  /** Each slot's group (kept by a snapshot). */
  groups: Int32Array;
  baseSequence: Uint8Array;
  tailSequence: GrowableTerms;
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
  /** Scratch for `termsOf`: the last slot's term ids. */
  decoded: Int32Array;
  /** Exact tfs of postings whose tf field is `TF_ESCAPE`, by `id * MAX_SLOTS + slot`, read from sequences once. */
  largeTfs: Map<number, number>;
  /**
   * A bulk load (a rebuild): passages added since `bulkFrom` have no postings yet, only `bulkCounts` (live ones
   * per term); the next compaction (which a search starts) lays them out straight into the base, read from their
   * sequences, and ends the bulk load. One flat array written once instead of a growing list per term.
   */
  bulk: boolean;
  bulkFrom: number;
  bulkCounts: Int32Array;
}

/**
 * An empty index's data, or one restored from `state`, whose arrays it keeps without copying (writing into the
 * per-passage ones: a state is handed over, as `readIndexSnapshot` and `snapshotOf` make them).
 */
export function createLexicalData(params: LexicalParams, state?: LexicalState, bulk = false): LexicalData {
  const slots = state ? state.keys.length : 0;
  const initial = Math.max(1024, slots);
  const data: LexicalData = {
    params,
    vocabulary: createVocabulary(state ? state.terms : []),
    df: state ? state.df : new Int32Array(1024),
    baseStart: state ? state.termStart : new Int32Array(1),
    basePostings: state ? state.postings : EMPTY,
    tails: [],
    slots,
    baseSlots: slots,
    keys: kept(state?.keys, Float64Array, initial),
    lengths: kept(state?.lengths, Int32Array, initial),
    alive: kept(state?.alive, Uint8Array, initial),
    sequenceStart: kept(state?.sequenceStart, Uint32Array, initial),
    groups:
      state && state.groups.length > 0 ? kept(state.groups, Int32Array, initial) : new Int32Array(initial),
    baseSequence: state ? state.sequence : NO_BYTES,
    tailSequence: new GrowableTerms(),
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
    decoded: new Int32Array(256),
    largeTfs: new Map(),
    bulk,
    bulkFrom: slots,
    bulkCounts: new Int32Array(bulk ? 1024 : 0),
  };
  countRestored(data);
  return data;
}

/** `source` itself if it has `size` cells, else a copy with that room (a restored index grows at its next add). */
function kept<T extends Float64Array | Uint8Array | Int32Array | Uint32Array>(
  source: T | undefined,
  make: new (n: number) => T,
  size: number,
): T {
  return source !== undefined && source.length === size ? source : resized(source, make, size);
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
  data.sequenceStart = resized(data.sequenceStart, Uint32Array, capacity);
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

/** `slot`'s term ids in text order: the first `lengths[slot]` cells of a scratch array the next call reuses. */
export function termsOf(data: LexicalData, slot: number): Int32Array {
  const bytes = slot < data.baseSlots ? data.baseSequence : data.tailSequence.data;
  const length = data.lengths[slot] as number;
  if (data.decoded.length < length) data.decoded = new Int32Array(length * 2);
  decodeTerms(bytes, data.sequenceStart[slot] as number, length, data.decoded);
  return data.decoded;
}

/** The largest tf a posting counts (more occurrences score as this many). */
const MAX_TF = 0xffff;

/** Where `largeTfs` keeps term `id`'s tf in `slot` (exact: ids stay below 2^28, slots below 2^25). */
function largeTfKey(id: number, slot: number): number {
  return id * MAX_SLOTS + slot;
}

/** The exact tf of term `id` in `slot`, whose posting's tf field is `TF_ESCAPE` (counted once, then kept). */
export function largeTf(data: LexicalData, id: number, slot: number): number {
  const key = largeTfKey(id, slot);
  const known = data.largeTfs.get(key);
  if (known !== undefined) return known;
  const terms = termsOf(data, slot);
  let count = 0;
  for (let p = 0; p < (data.lengths[slot] as number); p++) if (terms[p] === id) count += 1;
  const tf = Math.min(count, MAX_TF);
  data.largeTfs.set(key, tf);
  return tf;
}

/** The id of `term`, added if new. */
export function termId(data: LexicalData, term: string): number {
  const known = data.vocabulary.ids.get(term);
  if (known !== undefined) return known;
  if (data.vocabulary.text.length > MAX_TERM_ID)
    throw new Error(`lexical index holds at most ${MAX_TERM_ID + 1} distinct terms`);
  const id = addTerm(data.vocabulary, term);
  // At least 1024: the df of a snapshot of an empty index is empty.
  if (id >= data.df.length) data.df = resized(data.df, Int32Array, Math.max(1024, data.df.length * 2));
  if (data.bulk && id >= data.bulkCounts.length)
    data.bulkCounts = resized(data.bulkCounts, Int32Array, Math.max(1024, data.bulkCounts.length * 2));
  return id;
}

/** Calls `visit` once per distinct term of `slot` with its frequency, in order of first occurrence. */
export function distinctTerms(
  data: LexicalData,
  slot: number,
  visit: (id: number, tf: number) => void,
): void {
  countDistinct(data, termsOf(data, slot), data.lengths[slot] as number, visit);
}

/** Calls `visit` once per distinct id of `ids[0, length)` with its count, in order of first occurrence. */
function countDistinct(
  data: LexicalData,
  ids: Int32Array,
  length: number,
  visit: (id: number, tf: number) => void,
): void {
  if (data.termCounts.length < data.vocabulary.text.length)
    data.termCounts = new Int32Array(data.vocabulary.text.length * 2);
  if (data.seen.length < length) data.seen = new Int32Array(length * 2);
  const { termCounts, seen } = data;
  let distinct = 0;
  for (let p = 0; p < length; p++) {
    const id = ids[p] as number;
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
  const ids = scratchFor(data, terms.length);
  for (let i = 0; i < terms.length; i++) ids[i] = termId(data, terms[i] as string);
  addIds(data, key, ids, terms.length, group);
}

/** Adds a passage of the terms of `text.split(" ")` (none for ""), found in place. */
export function addPassageText(data: LexicalData, key: number, text: string, group: number): void {
  let count = 0;
  if (text.length > 0) {
    // One pass: each term's hash is taken while looking for the space that ends it.
    let start = 0;
    let hash = HASH_SEED;
    for (let i = 0; i <= text.length; i++) {
      const code = i < text.length ? text.charCodeAt(i) : SPACE;
      if (code !== SPACE) {
        hash = hashStep(hash, code);
        continue;
      }
      const found = findHashedTermIn(data.vocabulary, text, start, i, hash >>> 0);
      if (count === data.decoded.length) scratchFor(data, count + 1, count);
      data.decoded[count++] = found >= 0 ? found : termId(data, text.slice(start, i));
      start = i + 1;
      hash = HASH_SEED;
    }
  }
  addIds(data, key, data.decoded, count, group);
}

/** The scratch array `decoded` with room for `size` ids, its first `keep` ones kept. */
function scratchFor(data: LexicalData, size: number, keep = 0): Int32Array {
  if (data.decoded.length < size) {
    const next = new Int32Array(Math.max(size, data.decoded.length * 2));
    next.set(data.decoded.subarray(0, keep));
    data.decoded = next;
  }
  return data.decoded;
}

/** Makes a live slot for `key` of the term ids `ids[0, length)`: its sequence, postings, df and statistics. */
function addIds(data: LexicalData, key: number, ids: Int32Array, length: number, group: number): void {
  const slot = openSlot(data, key);
  data.tailSequence.append(ids, length);
  data.keys[slot] = key;
  data.groups[slot] = group;
  data.lengths[slot] = length;
  data.alive[slot] = 1;
  markAllowed(data.bitmaps, slot, group);
  data.unordered?.set(key, slot);
  const { df, bulk } = data;
  countDistinct(data, ids, length, (id, tf) => {
    df[id] = (df[id] as number) + 1;
    if (tf >= TF_ESCAPE) data.largeTfs.set(largeTfKey(id, slot), Math.min(tf, MAX_TF));
    if (bulk) data.bulkCounts[id] = (data.bulkCounts[id] as number) + 1;
    else {
      let tail = data.tails[id];
      if (!tail) {
        tail = new GrowableInt32();
        data.tails[id] = tail;
      }
      tail.push(packPosting(slot, tf));
    }
  });
  data.liveCount += 1;
  data.totalLength += length;
  data.normsValid = false;
}

/** A new slot for `key`, its term sequence to be pushed onto the tail next. */
function openSlot(data: LexicalData, key: number): number {
  if (slotOf(data, key) >= 0) throw new Error(`lexical index already holds key ${key}`);
  if (data.slots >= MAX_SLOTS)
    throw new Error(
      `lexical index holds at most ${MAX_SLOTS} passages, removed ones included until a rebuild`,
    );
  if (data.slots === data.keys.length) grow(data);
  const slot = data.slots++;
  if (!data.unordered && slot > 0 && key <= (data.keys[slot - 1] as number))
    data.unordered = liveKeyMap(data, slot);
  data.sequenceStart[slot] = data.tailSequence.length;
  return slot;
}

/** Marks `key`'s passage dead (its postings stay until compaction); false if there is none. */
export function removePassage(data: LexicalData, key: number): boolean {
  const slot = slotOf(data, key);
  if (slot < 0) return false;
  data.unordered?.delete(key);
  data.alive[slot] = 0;
  unmarkAllowed(data.bitmaps, slot);
  const unposted = data.bulk && slot >= data.bulkFrom;
  distinctTerms(data, slot, (id, tf) => {
    data.df[id] = (data.df[id] as number) - 1;
    if (unposted) data.bulkCounts[id] = (data.bulkCounts[id] as number) - 1;
    if (tf >= TF_ESCAPE) data.largeTfs.delete(largeTfKey(id, slot));
  });
  data.liveCount -= 1;
  data.totalLength -= data.lengths[slot] as number;
  data.normsValid = false;
  return true;
}

/** Folds passages added since the last compaction into the flat base arrays (one copy; frees the tails). */
export function compactData(data: LexicalData): void {
  if (data.slots === data.baseSlots && data.tails.length === 0) {
    endBulk(data);
    return;
  }
  // Postings of removed passages are dropped here; their slots stay (dead) so slot numbers hold.
  const starts = livePostingStarts(data);
  data.basePostings = livePostings(data, starts);
  data.baseStart = starts;
  data.baseSequence = mergedSequence(data);
  data.baseSlots = data.slots;
  data.tails = [];
  data.tailSequence = new GrowableTerms();
  endBulk(data);
}

/** Passages added from now on get their postings at once (in tails). */
function endBulk(data: LexicalData): void {
  data.bulk = false;
  data.bulkFrom = data.slots;
  data.bulkCounts = new Int32Array(0);
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
      for (let i = from; i < to; i++) if (alive[(list[i] as number) >>> TF_BITS] === 1) count += 1;
    });
    starts[id + 1] = (starts[id] as number) + count + (data.bulk ? (data.bulkCounts[id] ?? 0) : 0);
  }
  return starts;
}

/** The live postings of every term, base then tail then those of a bulk load, laid out at `starts`. */
function livePostings(data: LexicalData, starts: Int32Array): Int32Array {
  const terms = starts.length - 1;
  const { alive } = data;
  const postings = new Int32Array(starts[terms] as number);
  const cursor = new Int32Array(terms);
  for (let id = 0; id < terms; id++) {
    let at = starts[id] as number;
    postingLists(data, id, (list, from, to) => {
      for (let i = from; i < to; i++)
        if (alive[(list[i] as number) >>> TF_BITS] === 1) postings[at++] = list[i] as number;
    });
    cursor[id] = at;
  }
  if (!data.bulk) return postings;
  // Slots ascend within each term's postings, as passages added one by one leave them.
  for (let slot = data.bulkFrom; slot < data.slots; slot++) {
    if (alive[slot] !== 1) continue;
    distinctTerms(data, slot, (id, tf) => {
      const at = cursor[id] as number;
      postings[at] = packPosting(slot, tf);
      cursor[id] = at + 1;
    });
  }
  return postings;
}

/** The base sequence followed by the tail's, with the tail slots' starts moved to match. */
function mergedSequence(data: LexicalData): Uint8Array {
  const { baseSequence, tailSequence, sequenceStart } = data;
  const sequence = new Uint8Array(baseSequence.length + tailSequence.length);
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
