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
    result = foldDiacritics(/^\p{N}+$/u.test(word) ? word : stemmers[language].stem(word));
    if (cache.size > 200_000) cache.clear();
    cache.set(word, result);
  }
  return result;
}

/** The language of a document from a sample of its text (English when undecided). */
export function documentLanguage(text: string): Language {
  return detectLanguage(words(text.slice(0, 20_000))) ?? "en";
}

/** Index terms of a passage in a known language. */
export function analyzeText(text: string, language: Language): string[] {
  const drop = stopwords[language];
  const terms: string[] = [];
  for (const word of words(text)) if (!drop.has(word)) terms.push(stem(word, language));
  return terms;
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
