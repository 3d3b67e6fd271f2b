// Line diffs of a proposed page change, for the person who approves it: every line of both bodies with its
// number on each side (what the console and `approvals show` render), and the short text form the tool answers
// the agent with.
import type { BodyDiff, DiffLine } from "../../protocol/changes.js";

/** Lines beyond which the agent's text form is a summary (the approver's structured form has every line). */
const MAX_TEXT_LINES = 2_000;
/**
 * Edits Myers' search may spend aligning the changed middle of two bodies: its trace costs d × 2d integers,
 * so 1,000 edits is ~8 MB and a few milliseconds. Past it the middle is shown as removed then added.
 */
export const MAX_ALIGNED_EDITS = 1_000;

type Op = DiffLine["op"];

function splitLines(text: string): string[] {
  return text === "" ? [] : text.split("\n");
}

/**
 * The diff of two bodies. The common start and end are matched first (a small edit to a large page costs only
 * a scan), then the middle is aligned by Myers' O(ND) search within `maxEdits`.
 */
export function diffLines(before: string, after: string, maxEdits = MAX_ALIGNED_EDITS): BodyDiff {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middleA = a.slice(start, endA);
  const middleB = b.slice(start, endB);
  const aligned = alignMiddle(middleA, middleB, maxEdits);
  const ops: Op[] = [
    ...Array<Op>(start).fill("="),
    ...(aligned ?? [...Array<Op>(middleA.length).fill("-"), ...Array<Op>(middleB.length).fill("+")]),
    ...Array<Op>(a.length - endA).fill("="),
  ];
  return { ...numberLines(ops, a, b), coarse: aligned === undefined };
}

function numberLines(ops: Op[], a: string[], b: string[]): Omit<BodyDiff, "coarse"> {
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  let added = 0;
  let removed = 0;
  for (const op of ops) {
    if (op === "=") {
      lines.push({ op, old: i + 1, new: j + 1, text: a[i] as string });
      i++;
      j++;
    } else if (op === "-") {
      lines.push({ op, old: i + 1, new: null, text: a[i] as string });
      i++;
      removed++;
    } else {
      lines.push({ op, old: null, new: j + 1, text: b[j] as string });
      j++;
      added++;
    }
  }
  return { added, removed, lines };
}

/** Myers' shortest edit script from a to b, or undefined when it needs more than `maxEdits` edits. */
function alignMiddle(a: string[], b: string[], maxEdits: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return [...Array<Op>(n).fill("-"), ...Array<Op>(m).fill("+")];
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  // trace[d] is the furthest x on each diagonal k before step d: enough to walk the path back.
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const down = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number));
      let x = down ? (v[offset + k + 1] as number) : (v[offset + k - 1] as number) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return walkBack(trace, offset, n, m);
    }
  }
  return undefined;
}

function walkBack(trace: Int32Array[], offset: number, n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (v[offset + k - 1] as number) < (v[offset + k + 1] as number));
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK] as number;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("=");
      x--;
      y--;
    }
    if (d > 0) ops.push(x === prevX ? "+" : "-");
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** The agent's text form: "  " kept, "- " removed, "+ " added lines; a summary when either side is very large. */
export function lineDiff(before: string, after: string): string {
  const a = splitLines(before).length;
  const b = splitLines(after).length;
  if (a > MAX_TEXT_LINES || b > MAX_TEXT_LINES) {
    return `(large change: ${a} lines before, ${b} lines after)`;
  }
  const prefix: Record<Op, string> = { "=": "  ", "-": "- ", "+": "+ " };
  return diffLines(before, after)
    .lines.map((line) => `${prefix[line.op]}${line.text}`)
    .join("\n");
}
