// The lexical index's terms: ids by string, and by a hash of the characters so that a term inside a larger text is
// found in place (ingest adds space-separated text without cutting a string per term).

/**
 * Term ids both ways, and an open-addressing table (id + 1 per cell, at most half full) keyed by a hash of the
 * term's characters.
 */
export interface Vocabulary {
  ids: Map<string, number>;
  /** By id. A restored index keeps the snapshot's array and appends to it. */
  text: string[];
  hashed: Int32Array;
}

/** A vocabulary holding `terms` (kept, not copied) at their positions as ids. */
export function createVocabulary(terms: string[]): Vocabulary {
  const vocabulary: Vocabulary = { ids: new Map(), text: terms, hashed: new Int32Array(1 << 12) };
  for (let id = 0; id < terms.length; id++) vocabulary.ids.set(terms[id] as string, id);
  rehash(vocabulary);
  return vocabulary;
}

/** FNV-1a's starting value; `hashStep` folds in one UTF-16 code unit, `>>> 0` of the result is `hashOf`. */
export const HASH_SEED = 0x811c9dc5;
export function hashStep(hash: number, code: number): number {
  return Math.imul(hash ^ code, 0x01000193);
}

/** FNV-1a over the UTF-16 code units of `text[start, end)`. */
export function hashOf(text: string, start: number, end: number): number {
  let hash = HASH_SEED;
  for (let i = start; i < end; i++) hash = hashStep(hash, text.charCodeAt(i));
  return hash >>> 0;
}

function place(vocabulary: Vocabulary, id: number): void {
  const { hashed } = vocabulary;
  const term = vocabulary.text[id] as string;
  const mask = hashed.length - 1;
  let cell = hashOf(term, 0, term.length) & mask;
  while (hashed[cell] !== 0) cell = (cell + 1) & mask;
  hashed[cell] = id + 1;
}

/** Sizes the table for the vocabulary (at most half full) and places every term. */
function rehash(vocabulary: Vocabulary): void {
  let size = vocabulary.hashed.length;
  while ((vocabulary.text.length + 1) * 2 > size) size *= 2;
  vocabulary.hashed = new Int32Array(size);
  for (let id = 0; id < vocabulary.text.length; id++) place(vocabulary, id);
}

/** Adds a term not yet known; returns its id (the next one). */
export function addTerm(vocabulary: Vocabulary, term: string): number {
  const id = vocabulary.text.length;
  vocabulary.ids.set(term, id);
  vocabulary.text.push(term);
  if ((vocabulary.text.length + 1) * 2 > vocabulary.hashed.length) rehash(vocabulary);
  else place(vocabulary, id);
  return id;
}

/** The id of the term `text[start, end)`, or -1 if it is not known. */
export function findTermIn(vocabulary: Vocabulary, text: string, start: number, end: number): number {
  return findHashedTermIn(vocabulary, text, start, end, hashOf(text, start, end));
}

/** `findTermIn` given the term's `hashOf`. */
export function findHashedTermIn(
  vocabulary: Vocabulary,
  text: string,
  start: number,
  end: number,
  hash: number,
): number {
  const { hashed } = vocabulary;
  const mask = hashed.length - 1;
  let cell = hash & mask;
  for (;;) {
    const entry = hashed[cell] as number;
    if (entry === 0) return -1;
    const term = vocabulary.text[entry - 1] as string;
    if (term.length === end - start && text.startsWith(term, start)) return entry - 1;
    cell = (cell + 1) & mask;
  }
}
