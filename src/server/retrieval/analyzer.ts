// Turns text into index terms for English and Portuguese: Unicode words, lowercase, stopwords out, Snowball stems, diacritics folded.
import snowball from "snowball-stemmers";
import { ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS } from "./stopwords.js";

export type Language = "en" | "pt";

const WORD = /[\p{L}\p{N}]+/gu;
const MAX_TOKEN_LENGTH = 40;

const stemmers = {
  en: snowball.newStemmer("english"),
  pt: snowball.newStemmer("portuguese"),
};
const stopwords: Record<Language, Set<string>> = { en: ENGLISH_STOPWORDS, pt: PORTUGUESE_STOPWORDS };

/** Removes combining marks after canonical decomposition: "ação" → "acao". */
export function foldDiacritics(text: string): string {
  return text.normalize("NFD").replace(/\p{M}+/gu, "");
}

/** Lowercased words of `text` (not stemmed, stopwords kept). */
export function words(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((word) => word.length <= MAX_TOKEN_LENGTH);
}

/** The likelier language of a word list by function-word counts; undefined when there is no evidence either way. */
export function detectLanguage(list: readonly string[]): Language | undefined {
  let en = 0;
  let pt = 0;
  for (const word of list) {
    if (ENGLISH_STOPWORDS.has(word)) en += 1;
    if (PORTUGUESE_STOPWORDS.has(word)) pt += 1;
  }
  if (en === pt) return undefined;
  return en > pt ? "en" : "pt";
}

const stemCache: Record<Language, Map<string, string>> = { en: new Map(), pt: new Map() };

/** The folded Snowball stem of one lowercase word (cached: vocabularies are Zipfian). */
export function stem(word: string, language: Language): string {
  const cache = stemCache[language];
  let result = cache.get(word);
  if (result === undefined) {
    // Fold first, so that "implantação" and "implantacao" reach the stemmer as the same word.
    const folded = foldDiacritics(word);
    result = /^\p{N}+$/u.test(folded) ? folded : stemmers[language].stem(folded);
    if (cache.size > 200_000) cache.clear();
    cache.set(word, result);
  }
  return result;
}

/** Index terms of a passage in a known language. */
export function analyzeText(text: string, language: Language): string[] {
  return analyzeWithOffsets(text, language).terms;
}

/** A document analysed once: its language, terms, and each term's code-unit offset in the text. */
export interface AnalysedText {
  language: Language;
  terms: string[];
  offsets: Int32Array;
  /** Filled on first use by joinedTermsBetween. */
  joined?: string;
  joinedAt?: Int32Array;
}

const NON_ASCII_WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Word-ness of each BMP code unit outside the surrogates: 0 not yet known, 1 no, 2 yes. Filled on first sight
 * (a text uses few distinct characters), ASCII up front.
 */
const WORD_UNITS = new Uint8Array(0x10000);
for (let code = 0; code < 128; code++)
  WORD_UNITS[code] =
    (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code >= 65 && code <= 90) ? 2 : 1;

/** Whether the UTF-16 unit at `index` belongs to a word. */
function isWordUnit(text: string, index: number, code: number): boolean {
  const known = WORD_UNITS[code] as number;
  if (known !== 0) return known === 2;
  if (code >= 0xd800 && code <= 0xdfff) return isSurrogateWordUnit(text, index, code);
  const word = NON_ASCII_WORD_CHAR.test(String.fromCharCode(code));
  WORD_UNITS[code] = word ? 2 : 1;
  return word;
}

/** Surrogate pairs: the whole code point is tested at its high half, and the low half follows it. */
function isSurrogateWordUnit(text: string, index: number, code: number): boolean {
  if (code >= 0xdc00) return index > 0 && isWordUnit(text, index - 1, text.charCodeAt(index - 1));
  return NON_ASCII_WORD_CHAR.test(String.fromCodePoint(text.codePointAt(index) as number));
}

/** Whether BMP unit `code`, not a surrogate, is a letter or a digit: what words are made of. */
export function isWordCode(code: number): boolean {
  return isWordUnit("", 0, code);
}

const EN_STOPWORD = 1;
const PT_STOPWORD = 2;

/** A word's stopword bits: 1 English, 2 Portuguese (wasm/term-scanner.ts reads the same bits). */
export function stopwordFlags(word: string): number {
  return (ENGLISH_STOPWORDS.has(word) ? EN_STOPWORD : 0) | (PORTUGUESE_STOPWORDS.has(word) ? PT_STOPWORD : 0);
}

/**
 * Every word seen (up to a million, then it starts afresh): its characters in one flat pool, its stopword flags
 * and, once asked, its term in each language ("" for a stopword). A word is found by a hash computed while
 * scanning and compared in place against the pool, so the common case (a word seen before) allocates nothing.
 */
export class Lexicon {
  private slots = new Int32Array(1 << 15);
  private hashes = new Int32Array(1 << 14);
  private starts = new Int32Array(1 << 14);
  private lengths = new Uint8Array(1 << 14);
  flags = new Uint8Array(1 << 14);
  private pool = new Uint16Array(1 << 17);
  private poolUsed = 0;
  private words: string[] = [];
  private terms: Record<Language, (string | undefined)[]> = { en: [], pt: [] };

  constructor(private readonly limit = 1_000_000) {}

  /** The entry of word text[start, end) (at most MAX_TOKEN_LENGTH units), added when new. */
  find(text: string, start: number, end: number, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 1;
    const length = end - start;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = slots[slot] as number;
      if (stored === 0) return this.add(text, start, end, hash, slot);
      const entry = stored - 1;
      if (this.hashes[entry] === hash && this.lengths[entry] === length) {
        const pool = this.pool;
        let at = this.starts[entry] as number;
        let i = start;
        while (i < end && pool[at] === text.charCodeAt(i)) {
          at += 1;
          i += 1;
        }
        if (i === end) return entry;
      }
    }
  }

  term(entry: number, language: Language): string {
    const terms = this.terms[language];
    let term = terms[entry];
    if (term === undefined) {
      const stopword = (this.flags[entry] as number) & (language === "en" ? EN_STOPWORD : PT_STOPWORD);
      // A fresh flat copy: the stemmer builds its result from pieces, which every later join would walk again.
      term = stopword ? "" : flat(stem(this.words[entry] as string, language));
      terms[entry] = term;
    }
    return term;
  }

  private add(text: string, start: number, end: number, hash: number, slot: number): number {
    const entry = this.words.length;
    if (entry >= this.limit) {
      this.clear();
      return this.find(text, start, end, hash);
    }
    if (entry === this.hashes.length) this.growEntries();
    const length = end - start;
    if (this.poolUsed + length > this.pool.length) this.pool = grown(this.pool, this.pool.length * 2);
    for (let i = 0; i < length; i++) this.pool[this.poolUsed + i] = text.charCodeAt(start + i);
    this.starts[entry] = this.poolUsed;
    this.poolUsed += length;
    this.hashes[entry] = hash;
    this.lengths[entry] = length;
    const word = text.slice(start, end);
    this.words.push(word);
    this.terms.en.push(undefined);
    this.terms.pt.push(undefined);
    this.flags[entry] = stopwordFlags(word);
    this.slots[slot] = entry + 1;
    if (this.words.length * 2 > this.slots.length) this.rehash();
    return entry;
  }

  private growEntries(): void {
    const size = this.hashes.length * 2;
    this.hashes = grown(this.hashes, size);
    this.starts = grown(this.starts, size);
    this.lengths = grown(this.lengths, size);
    this.flags = grown(this.flags, size);
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.words.length; entry++) {
      let slot = (this.hashes[entry] as number) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = entry + 1;
    }
    this.slots = slots;
  }

  private clear(): void {
    this.slots = new Int32Array(1 << 15);
    this.poolUsed = 0;
    this.words = [];
    this.terms = { en: [], pt: [] };
  }
}

function grown<T extends Int32Array | Uint8Array | Uint16Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (size: number) => T)(size);
  bigger.set(array);
  return bigger;
}

const lexicon = new Lexicon();
export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 16777619;
/** How many leading words decide a text's language. */
const LANGUAGE_SAMPLE = 500;

/** Scratch space of analyzeWithOffsets: each word's lexicon entry and offset, before the language is known. */
let scratchEntries = new Int32Array(1 << 14);
let scratchStarts = new Int32Array(1 << 14);

/**
 * Tokenises the whole text once. Unless given, the language is the one whose stopwords are more frequent in
 * the first 500 words (English when even), as detectLanguage decides; the terms are then taken in it.
 */
export function analyzeWithOffsets(text: string, language?: Language): AnalysedText {
  const lower = text.toLowerCase();
  const length = lower.length;
  let count = 0;
  let seen = 0;
  let en = 0;
  let pt = 0;
  let start = -1;
  let hash = 0;
  // A hand-written scan with an FNV-1a hash on the way: several times faster than regex + Map.
  for (let i = 0; i <= length; i++) {
    const code = i < length ? lower.charCodeAt(i) : 32;
    if (i < length && isWordUnit(lower, i, code)) {
      if (start < 0) {
        start = i;
        hash = FNV_OFFSET;
      }
      hash = Math.imul(hash ^ code, FNV_PRIME);
    } else if (start >= 0) {
      // Longer words are neither terms nor stopwords, but they count towards the language sample.
      if (i - start <= MAX_TOKEN_LENGTH) {
        const entry = lexicon.find(lower, start, i, hash);
        if (seen < LANGUAGE_SAMPLE) {
          const flags = lexicon.flags[entry] as number;
          if (flags & EN_STOPWORD) en += 1;
          if (flags & PT_STOPWORD) pt += 1;
        }
        if (count === scratchEntries.length) {
          scratchEntries = grown(scratchEntries, count * 2);
          scratchStarts = grown(scratchStarts, count * 2);
        }
        scratchEntries[count] = entry;
        scratchStarts[count] = start;
        count += 1;
      }
      seen += 1;
      start = -1;
    }
  }
  const chosen: Language = language ?? (en >= pt ? "en" : "pt");
  const terms: string[] = [];
  const offsets = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const term = lexicon.term(scratchEntries[i] as number, chosen);
    if (term !== "") {
      offsets[terms.length] = scratchStarts[i] as number;
      terms.push(term);
    }
  }
  return { language: chosen, terms, offsets: offsets.slice(0, terms.length) };
}

/**
 * The space-joined terms whose offsets fall in [start, end), cut from one joined string of the whole
 * document (built once), so that each chunk costs a slice rather than an array copy and a join.
 */
export function joinedTermsBetween(analysed: AnalysedText, start: number, end: number): string {
  if (!analysed.joined) {
    analysed.joined = analysed.terms.join(" ");
    const at = new Int32Array(analysed.terms.length + 1);
    for (let i = 0; i < analysed.terms.length; i++)
      at[i + 1] = (at[i] as number) + (analysed.terms[i] as string).length + 1;
    analysed.joinedAt = at;
  }
  const from = lowerBound(analysed.offsets, start);
  const to = lowerBound(analysed.offsets, end);
  if (to <= from) return "";
  const at = analysed.joinedAt as Int32Array;
  return analysed.joined.slice(at[from] as number, (at[to] as number) - 1);
}

function lowerBound(values: Int32Array, target: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((values[mid] as number) < target) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Query terms with weights. A query in a recognisable language is stemmed in it; otherwise each word
 * contributes its stem in every language, sharing the word's weight.
 */
export function analyzeQuery(
  text: string,
  languages: readonly Language[] = ["en", "pt"],
): Map<string, number> {
  const list = words(text);
  const detected = detectLanguage(list);
  const chosen = detected ? [detected] : languages;
  const weights = new Map<string, number>();
  for (const word of list) {
    const stems = new Set<string>();
    for (const language of chosen) if (!stopwords[language].has(word)) stems.add(stem(word, language));
    for (const term of stems) weights.set(term, (weights.get(term) ?? 0) + 1 / stems.size);
  }
  return weights;
}

/** A sequential copy of `text` (JSON.parse builds strings in one piece). */
function flat(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}
