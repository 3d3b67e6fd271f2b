// The part of a passage shown with a search result: around the first query word it contains.
import { foldDiacritics } from "./analyzer.js";

/** About 300 characters of the passage around the first query word it contains. */
export function makeSnippet(text: string, queryWords: readonly string[], width = 300): string {
  const folded = foldDiacritics(text.toLowerCase());
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
