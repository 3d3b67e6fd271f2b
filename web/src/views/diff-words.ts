// Word-level differences inside a removed line and the added line that replaces it, computed in the browser
// with a bounded LCS (long lines are left unmarked), and the pairing of a diff's lines into split-view rows.
import type { DiffLine } from "../types.js";

/** A stretch of a line's text, marked when it is not in the other line. */
export interface Segment {
  text: string;
  changed: boolean;
}

/** One split-view row: indexes into the diff's lines for the old side and the new side (null = blank). */
export interface SplitRow {
  left: number | null;
  right: number | null;
}

/** Above this many token pairs (old × new) a line pair is not compared word by word: the work stays bounded. */
const MAX_CELLS = 40_000;
/** Below this share of kept text, marking words is noise: the whole line changed. */
const MIN_KEPT = 0.25;

/** Words, runs of spaces, and single other characters. */
function tokens(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) ?? [];
}

/**
 * The old and new line as segments, changed words marked; null when the lines are too long to compare within
 * the budget or share too little for marks to help.
 */
export function wordDiff(oldText: string, newText: string): { old: Segment[]; new: Segment[] } | null {
  const a = tokens(oldText);
  const b = tokens(newText);
  if (a.length === 0 || b.length === 0 || a.length * b.length > MAX_CELLS) return null;
  const width = b.length + 1;
  // lcs[i][j] = length of the LCS of a[i..] and b[j..], in one flat array.
  const lcs = new Uint16Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * width + j + 1] as number) + 1
          : Math.max(lcs[(i + 1) * width + j] as number, lcs[i * width + j + 1] as number);
    }
  }
  const oldKept: boolean[] = [];
  const newKept: boolean[] = [];
  let i = 0;
  let j = 0;
  let keptChars = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      keptChars += (a[i] as string).length;
      oldKept[i++] = true;
      newKept[j++] = true;
    } else if ((lcs[(i + 1) * width + j] as number) >= (lcs[i * width + j + 1] as number)) {
      oldKept[i++] = false;
    } else {
      newKept[j++] = false;
    }
  }
  if (keptChars < MIN_KEPT * Math.max(oldText.length, newText.length)) return null;
  return { old: segments(a, oldKept), new: segments(b, newKept) };
}

/** Joins neighbouring tokens of the same kind; whitespace between two changed words counts as changed. */
function segments(words: string[], kept: boolean[]): Segment[] {
  const out: Segment[] = [];
  const isChanged = (index: number) => index >= 0 && index < words.length && kept[index] !== true;
  words.forEach((text, index) => {
    const bridge = /^\s+$/.test(text) && isChanged(index - 1) && isChanged(index + 1);
    const changed = bridge || kept[index] !== true;
    const last = out[out.length - 1];
    if (last && last.changed === changed) last.text += text;
    else out.push({ text, changed });
  });
  return out;
}

/** Kept lines on both sides; each run of removed lines beside the run of added lines that follows it. */
export function pairRows(lines: DiffLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let index = 0;
  while (index < lines.length) {
    const line = lines[index] as DiffLine;
    if (line.op === "=") {
      rows.push({ left: index, right: index });
      index++;
      continue;
    }
    const removed: number[] = [];
    const added: number[] = [];
    while (index < lines.length && lines[index]?.op === "-") removed.push(index++);
    while (index < lines.length && lines[index]?.op === "+") added.push(index++);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) {
      rows.push({ left: removed[k] ?? null, right: added[k] ?? null });
    }
  }
  return rows;
}
