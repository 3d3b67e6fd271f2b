// A readable line diff of a proposed page change, for the person who approves it.

const MAX_LINES = 2_000;

/** Unified-style lines: " " kept, "-" removed, "+" added; a summary when either side is very large. */
export function lineDiff(before: string, after: string): string {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return `(large change: ${a.length} lines before, ${b.length} lines after)`;
  }
  // Longest common subsequence table, then a walk that prefers removals before additions.
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as Uint16Array;
      row[j] =
        a[i] === b[j]
          ? ((lcs[i + 1] as Uint16Array)[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as Uint16Array)[j] as number, row[j + 1] as number);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (
      j >= b.length ||
      (i < a.length &&
        ((lcs[i + 1] as Uint16Array)[j] as number) >= ((lcs[i] as Uint16Array)[j + 1] as number))
    ) {
      out.push(`- ${a[i]}`);
      i++;
    } else {
      out.push(`+ ${b[j]}`);
      j++;
    }
  }
  return out.join("\n");
}
