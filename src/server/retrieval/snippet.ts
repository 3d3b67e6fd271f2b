// The part of a passage shown with a search result: around the first query word it contains.
import { foldDiacritics } from "./analyzer.js";

/** A character other than printable ASCII, tab or a line break: only such text may hold a diacritic to fold. */
const NON_ASCII = /[^\t\n\r -~]/;

/** About 300 characters of the passage around the first query word it contains. */
export function makeSnippet(text: string, queryWords: readonly string[], width = 300): string {
  const lower = text.toLowerCase();
  // Text with no character past ASCII has no diacritics to fold (the fold is a page body's length of work per hit).
  const folded = NON_ASCII.test(lower) ? foldDiacritics(lower) : lower;
  let at = -1;
  for (const word of queryWords) {
    const found = folded.indexOf(word);
    if (found >= 0 && (at < 0 || found < at)) at = found;
  }
  let start = Math.max(0, at < 0 ? 0 : at - Math.floor(width / 3));
  if (start > 0) {
    const space = text.indexOf(" ", start);
    if (space >= 0 && space - start < 30) start = space + 1;
  }
  const slice = text
    .slice(start, start + width)
    .replace(/\s+/g, " ")
    .trim();
  return `${start > 0 ? "… " : ""}${slice}${start + width < text.length ? " …" : ""}`;
}
