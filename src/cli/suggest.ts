// "Did you mean": the closest known word to a mistyped command or flag, by edit distance.

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidate a typo most likely meant: the nearest within a distance that grows with the word
 * (1 up to 4 characters, else 2), or the only candidate the word starts (3 characters or more).
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const typed = word.toLowerCase();
  const limit = typed.replace(/^-+/, "").length <= 4 ? 1 : 2;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  if (best) return best.candidate;
  const bare = typed.replace(/^-+/, "");
  if (bare.length < 3) return undefined;
  const prefixed = candidates.filter((candidate) => candidate.toLowerCase().startsWith(typed));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
