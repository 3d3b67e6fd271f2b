// The first markdown heading of a text, found by scanning lines (a regex here was cubic on long space runs).

const SCAN_CHARS = 4096;

/** The text of the first `#`, `##` or `###` heading within the first 4 KiB, without a closing `#` run. */
export function firstHeading(text: string): string | undefined {
  const head = text.slice(0, SCAN_CHARS);
  let lineStart = 0;
  while (lineStart < head.length) {
    const newline = head.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? head.length : newline;
    const heading = atxHeading(head.slice(lineStart, lineEnd));
    if (heading) return heading;
    lineStart = lineEnd + 1;
  }
  return undefined;
}

function atxHeading(line: string): string | undefined {
  let level = 0;
  while (level < line.length && line[level] === "#") level++;
  if (level < 1 || level > 3 || !isBlank(line[level])) return undefined;
  let end = line.length;
  while (end > level && isBlank(line[end - 1])) end--;
  // A closing run of `#` counts only after a blank (`# C#` keeps its `#`).
  let hashes = end;
  while (hashes > level && line[hashes - 1] === "#") hashes--;
  if (hashes < end && isBlank(line[hashes - 1])) end = hashes;
  const content = line.slice(level, end).trim();
  return content.length > 0 ? content : undefined;
}

function isBlank(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\r";
}
