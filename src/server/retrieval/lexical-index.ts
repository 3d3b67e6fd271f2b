// In-memory BM25 index with RM3 pseudo-relevance feedback; a rebuildable cache of the catalogue's analysed chunks.
//
// FTS5's bm25() fixes k1/b and cannot weight query terms, which relevance feedback needs, so the
// lexical ranking lives here over typed arrays; SQLite stays the authority for what is indexed.
//
// The index's state is one record (lexical-data.ts, which also describes the layout); the operations are functions
// over it, by concern: lexical-vocabulary.ts, allowed-bitmaps.ts, lexical-scoring.ts (BM25 and the top-k),
// lexical-search.ts (feedback, proximity) and window-scores.ts. This file holds the public types and wires them.
import {
  addPassage,
  addPassageText,
  compactData,
  createLexicalData,
  removePassage,
  slotOf,
  snapshotOf,
} from "./lexical-data.js";
import { searchData } from "./lexical-search.js";
import { windowScoresOf } from "./window-scores.js";

export { ALLOWED_BITMAPS } from "./allowed-bitmaps.js";

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
 * An index's whole content as flat typed arrays (what a snapshot stores). Postings are packed (slot, tf) int32s
 * (packed-arrays.ts), term `t`'s in `postings[termStart[t] .. termStart[t + 1])`; slot `s`'s `lengths[s]` terms
 * in text order are variable-length ids in `sequence` from byte `sequenceStart[s]`.
 */
export interface LexicalState {
  terms: string[];
  keys: Float64Array;
  alive: Uint8Array;
  lengths: Int32Array;
  sequenceStart: Uint32Array;
  sequence: Uint8Array;
  termStart: Int32Array;
  postings: Int32Array;
  df: Int32Array;
  /** Each passage's group (see `add`); empty when every passage is in group 0. */
  groups: Int32Array;
}

export interface LexicalIndex {
  /**
   * Adds a passage under `key` (replacing nothing: keys are unique for the life of the index), in `group`
   * (default 0; searches may be confined to groups, which `state()` keeps).
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

/**
 * A new index, empty or restored from `state` (whose flat arrays it keeps without copying). With `bulk` (a rebuild
 * that nobody searches until it is done), passages are added faster and get their postings at the first
 * compaction or search, which ends the bulk load.
 */
export function createLexicalIndex(
  params: LexicalParams = DEFAULT_LEXICAL_PARAMS,
  state?: LexicalState,
  options: { bulk?: boolean } = {},
): LexicalIndex {
  const data = createLexicalData(params, state, options.bulk === true);
  return {
    get size() {
      return data.liveCount;
    },
    get dead() {
      return data.slots - data.liveCount;
    },
    has: (key) => slotOf(data, key) >= 0,
    add: (key, terms, group = 0) => addPassage(data, key, terms, group),
    addText: (key, text, group = 0) => addPassageText(data, key, text, group),
    remove: (key) => removePassage(data, key),
    search: (query, options) => searchData(data, query, options),
    windowScores: (query, windows, weights) => windowScoresOf(data, query, windows, weights),
    compact: () => compactData(data),
    state: () => snapshotOf(data),
  };
}
