// Chunk terms for ingestion on WebAssembly (wasm/term-scanner.ts): the words are scanned, looked up and joined
// per chunk inside the module; only a word's first stem in a language is computed here (with analyzer.ts's stem).
// Exactly the terms of the JavaScript analyser (analyzeWithOffsets + joinedTermsBetween, its reference in the
// tests), several times faster. A text with surrogate pairs, or a runtime where the module cannot be
// instantiated, gets undefined and the caller uses the JavaScript analyser.
import { isWordCode, type Language, stem, stopwordFlags } from "./analyzer.js";
import { ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS } from "./stopwords.js";
import { TERM_SCANNER_WASM } from "./term-scanner-wasm.js";

// The part of the WebAssembly API used here (TypeScript's ES library, without the DOM's, does not describe it).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};

interface ScannerExports {
  memory: { buffer: ArrayBuffer };
  init(): void;
  wordTablePointer(): number;
  clear(): void;
  inputPointer(units: number): number;
  addStopword(units: number, flags: number): void;
  wordStart(entry: number): number;
  wordLength(entry: number): number;
  poolPointer(): number;
  scan(units: number, limit: number): number;
  takeVotes(): number;
  termPointer(units: number): number;
  setTerm(language: number, entry: number, units: number): void;
  setWideTerm(language: number, entry: number): void;
  boundsPointer(chunks: number, headerUnits: number): number;
  chunkEndsPointer(): number;
  missingPointer(): number;
  outputPointer(): number;
  emit(language: number, chunks: number, headerUnits: number): number;
}

/** Words the module keeps before it starts afresh (as the JavaScript lexicon does). */
const LEXICON_LIMIT = 1_000_000;
const LANGUAGES: readonly Language[] = ["en", "pt"];
const SURROGATE = /[\uD800-\uDFFF]/;
/** A unit above 0xFF: terms and headers are kept one byte per unit in the module. */
const WIDE = /[\u0100-\uffff]/;
/** emit's answer for a text whose terms need units above 0xFF. */
const NEEDS_WIDE = -0x40000000;

let scanner: ScannerExports | null | undefined;

function load(): ScannerExports | null {
  try {
    const module = new WebAssembly.Module(Buffer.from(TERM_SCANNER_WASM, "base64"));
    const instance = new WebAssembly.Instance(module, {
      env: {
        abort: () => {
          throw new Error("the term scanner aborted");
        },
      },
    });
    const exports = instance.exports as unknown as ScannerExports;
    exports.init();
    const table = new Uint8Array(exports.memory.buffer, exports.wordTablePointer(), 0x10000);
    // Every BMP unit by the analyser's own test; surrogates are never in the module's texts.
    for (let code = 0; code < 0x10000; code++)
      table[code] = code < 0xd800 || code > 0xdfff ? (isWordCode(code) ? 2 : 1) : 1;
    addStopwords(exports);
    return exports;
  } catch {
    return null;
  }
}

function addStopwords(exports: ScannerExports): void {
  for (const word of new Set([...ENGLISH_STOPWORDS, ...PORTUGUESE_STOPWORDS])) {
    writeUnits(exports, exports.inputPointer(word.length), word);
    exports.addStopword(word.length, stopwordFlags(word));
  }
}

function writeUnits(exports: ScannerExports, pointer: number, text: string): void {
  Buffer.from(exports.memory.buffer).write(text, pointer, text.length * 2, "utf16le");
}

export interface ChunkTerms {
  language: Language;
  /** Every chunk's terms, one after the other; chunk i's end at termEnds[i]. */
  terms: string;
  termEnds: Int32Array;
}

/**
 * The terms of each chunk ([bounds[2i], bounds[2i+1]) in code units of `text`), after the header's terms
 * (`header(language)`, space-joined) when the chunk has terms of its own; undefined when the JavaScript analyser
 * must do it.
 */
export function chunkTerms(
  text: string,
  bounds: Int32Array,
  header: (language: Language) => string,
  language?: Language,
  lexiconLimit = LEXICON_LIMIT,
): ChunkTerms | undefined {
  if (scanner === undefined) scanner = load();
  if (!scanner) return undefined;
  try {
    return scan(scanner, text, bounds, header, language, lexiconLimit);
  } catch {
    // A trap (its memory could not grow) may leave the module half-way: the JavaScript analyser takes over.
    scanner = null;
    return undefined;
  }
}

function scan(
  exports: ScannerExports,
  text: string,
  bounds: Int32Array,
  header: (language: Language) => string,
  language: Language | undefined,
  lexiconLimit: number,
): ChunkTerms | undefined {
  const lower = text.toLowerCase();
  if (SURROGATE.test(lower)) return undefined;
  writeUnits(exports, exports.inputPointer(lower.length), lower);
  if (exports.scan(lower.length, lexiconLimit) < 0) {
    exports.clear();
    addStopwords(exports);
    writeUnits(exports, exports.inputPointer(lower.length), lower);
    exports.scan(lower.length, 0x7fffffff);
  }
  const votes = exports.takeVotes();
  const chosen: Language = language ?? (LANGUAGES[votes] as Language);
  const languageIndex = LANGUAGES.indexOf(chosen);
  const headerTerms = header(chosen);
  if (WIDE.test(headerTerms)) return undefined;
  const chunks = bounds.length / 2;
  const boundsAt = exports.boundsPointer(chunks, headerTerms.length);
  new Int32Array(exports.memory.buffer, boundsAt, bounds.length).set(bounds);
  Buffer.from(exports.memory.buffer).write(headerTerms, boundsAt + chunks * 8, headerTerms.length, "latin1");
  let written = exports.emit(languageIndex, chunks, headerTerms.length);
  if (written < 0 && written !== NEEDS_WIDE) {
    setTerms(exports, -written, chosen, languageIndex);
    written = exports.emit(languageIndex, chunks, headerTerms.length);
  }
  if (written < 0) return undefined;
  const at = exports.outputPointer();
  const terms = Buffer.from(exports.memory.buffer).toString("latin1", at, at + written);
  const termEnds = new Int32Array(exports.memory.buffer, exports.chunkEndsPointer(), chunks).slice();
  return { language: chosen, terms, termEnds };
}

/** Stems the words the module has no term for yet in `language` ("" for its stopwords). */
function setTerms(exports: ScannerExports, count: number, language: Language, languageIndex: number): void {
  const missing = new Int32Array(exports.memory.buffer, exports.missingPointer(), count).slice();
  const stopwords = language === "en" ? ENGLISH_STOPWORDS : PORTUGUESE_STOPWORDS;
  for (const entry of missing) {
    const start = exports.wordStart(entry);
    const length = exports.wordLength(entry);
    const pool = exports.poolPointer() + start * 2;
    const word = Buffer.from(exports.memory.buffer).toString("utf16le", pool, pool + length * 2);
    const term = stopwords.has(word) ? "" : stem(word, language);
    if (WIDE.test(term)) {
      exports.setWideTerm(languageIndex, entry);
      continue;
    }
    Buffer.from(exports.memory.buffer).write(term, exports.termPointer(term.length), term.length, "latin1");
    exports.setTerm(languageIndex, entry, term.length);
  }
}
