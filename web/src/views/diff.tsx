// A page body's diff as the gateway computed it (changes.body): every line with its number on each side, the
// change counts, changed words marked inside paired lines, unified or split. Agent text is only ever text.
import { memo, type ReactNode, useEffect, useMemo, useState } from "react";
import type { BodyDiff, DiffLine } from "../types.js";
import { pairRows, type Segment, type SplitRow, wordDiff } from "./diff-words.js";

export type DiffLayout = "unified" | "split";

const LAYOUT_KEY = "ivoai.console.diff-layout";
/** Lines rendered per step: the first step paints at once, the rest follow on later tasks (a 1 MB body). */
const CHUNK = 500;

/** The person's last chosen layout (unified by default, or when storage is unavailable). */
function storedLayout(): DiffLayout {
  try {
    return window.localStorage.getItem(LAYOUT_KEY) === "split" ? "split" : "unified";
  } catch {
    return "unified";
  }
}

function storeLayout(layout: DiffLayout): void {
  try {
    window.localStorage.setItem(LAYOUT_KEY, layout);
  } catch {
    // Private mode or storage full: the choice lasts for this view only.
  }
}

/** "+3 −1", with words for screen readers. */
export function DiffCounts({ diff }: { diff: BodyDiff }) {
  return (
    <span className="ap-counts">
      <span aria-hidden="true">
        <span className="ap-count-add">+{diff.added}</span>{" "}
        <span className="ap-count-del">−{diff.removed}</span>
      </span>
      <span className="ap-sr-only">
        {diff.added} lines added, {diff.removed} removed
      </span>
    </span>
  );
}

export function BodyDiffView({ diff, label }: { diff: BodyDiff; label: string }) {
  const [layout, setLayout] = useState<DiffLayout>(storedLayout);
  const choose = (next: DiffLayout) => {
    setLayout(next);
    storeLayout(next);
  };
  if (diff.lines.length === 0) return <p className="muted">The page has no body lines.</p>;
  return (
    <div className="ap-diff">
      <div className="ap-diff-bar">
        <DiffCounts diff={diff} />
        <fieldset className="ap-layout">
          <legend className="ap-sr-only">Diff layout</legend>
          {(["unified", "split"] as const).map((name) => (
            <button
              key={name}
              type="button"
              aria-pressed={layout === name}
              className={layout === name ? "ap-pressed" : undefined}
              onClick={() => choose(name)}
            >
              {name === "unified" ? "Unified" : "Split"}
            </button>
          ))}
        </fieldset>
      </div>
      {diff.coarse && (
        <p className="muted">
          The bodies differ too much to align line by line: the common start and end are kept, the middle is
          shown removed then added.
        </p>
      )}
      {layout === "unified" ? (
        <UnifiedDiff lines={diff.lines} label={label} />
      ) : (
        <SplitDiff lines={diff.lines} label={label} />
      )}
    </div>
  );
}

/** How many of `total` rows to render now: all of them, one chunk per task, so a huge body never blocks input. */
function useProgressive(total: number): number {
  const [shown, setShown] = useState(Math.min(total, CHUNK));
  useEffect(() => {
    if (shown >= total) return;
    const timer = setTimeout(() => setShown((current) => Math.min(total, current + CHUNK)), 0);
    return () => clearTimeout(timer);
  }, [shown, total]);
  return Math.min(shown, total);
}

/** Word segments of each paired line, computed when its row first renders and kept (a stable function per diff). */
function useWordCache(lines: DiffLine[]): (index: number) => Segment[] | null {
  return useMemo(() => {
    const cache = new Map<number, Segment[] | null>();
    const pairs = pairedLines(lines);
    return (index: number) => {
      const cached = cache.get(index);
      if (cached !== undefined) return cached;
      const partner = pairs.get(index);
      const line = lines[index];
      let segments: Segment[] | null = null;
      if (partner !== undefined && line) {
        const other = lines[partner]?.text ?? "";
        const words = line.op === "-" ? wordDiff(line.text, other) : wordDiff(other, line.text);
        segments = words ? (line.op === "-" ? words.old : words.new) : null;
      }
      cache.set(index, segments);
      return segments;
    };
  }, [lines]);
}

/** Index of each removed line's added partner and back (the i-th of a removed run with the i-th added after it). */
function pairedLines(lines: DiffLine[]): Map<number, number> {
  const pairs = new Map<number, number>();
  for (const row of pairRows(lines)) {
    if (row.left !== null && row.right !== null && lines[row.left]?.op === "-") {
      pairs.set(row.left, row.right);
      pairs.set(row.right, row.left);
    }
  }
  return pairs;
}

function DiffBox({ label, split, children }: { label: string; split: boolean; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section className={`ap-diff-box${split ? " ap-split" : ""}`} aria-label={label} tabIndex={0}>
      <div className="ap-diff-lines">{children}</div>
    </section>
  );
}

function UnifiedDiff({ lines, label }: { lines: DiffLine[]; label: string }) {
  const shown = useProgressive(lines.length);
  const words = useWordCache(lines);
  const chunks: number[] = [];
  for (let start = 0; start < shown; start += CHUNK) chunks.push(start);
  return (
    <DiffBox label={label} split={false}>
      {chunks.map((start) => (
        <UnifiedChunk
          key={start}
          lines={lines}
          start={start}
          end={Math.min(shown, start + CHUNK)}
          words={words}
        />
      ))}
    </DiffBox>
  );
}

const UnifiedChunk = memo(function UnifiedChunk({
  lines,
  start,
  end,
  words,
}: {
  lines: DiffLine[];
  start: number;
  end: number;
  words: (index: number) => Segment[] | null;
}) {
  const rows = [];
  for (let index = start; index < end; index++) {
    const line = lines[index] as DiffLine;
    rows.push(
      <div key={index} className={`ap-dl ${opClass(line.op)}`}>
        <span className="ap-ln" aria-hidden="true">
          {line.old ?? ""}
        </span>
        <span className="ap-ln" aria-hidden="true">
          {line.new ?? ""}
        </span>
        <LineText line={line} segments={words(index)} />
      </div>,
    );
  }
  return <>{rows}</>;
});

function SplitDiff({ lines, label }: { lines: DiffLine[]; label: string }) {
  const rows = useMemo(() => pairRows(lines), [lines]);
  const shown = useProgressive(rows.length);
  const words = useWordCache(lines);
  const chunks: number[] = [];
  for (let start = 0; start < shown; start += CHUNK) chunks.push(start);
  return (
    <DiffBox label={label} split={true}>
      {chunks.map((start) => (
        <SplitChunk
          key={start}
          lines={lines}
          rows={rows}
          start={start}
          end={Math.min(shown, start + CHUNK)}
          words={words}
        />
      ))}
    </DiffBox>
  );
}

const SplitChunk = memo(function SplitChunk({
  lines,
  rows,
  start,
  end,
  words,
}: {
  lines: DiffLine[];
  rows: SplitRow[];
  start: number;
  end: number;
  words: (index: number) => Segment[] | null;
}) {
  const out = [];
  for (let index = start; index < end; index++) {
    const row = rows[index] as SplitRow;
    out.push(
      <div key={index} className="ap-dl ap-split-row">
        <SplitSide lines={lines} index={row.left} side="old" words={words} />
        <SplitSide lines={lines} index={row.right} side="new" words={words} />
      </div>,
    );
  }
  return <>{out}</>;
});

function SplitSide({
  lines,
  index,
  side,
  words,
}: {
  lines: DiffLine[];
  index: number | null;
  side: "old" | "new";
  words: (index: number) => Segment[] | null;
}) {
  const line = index === null ? undefined : lines[index];
  if (!line || index === null) {
    return (
      <>
        <span className="ap-ln ap-blank" aria-hidden="true" />
        <span className="ap-dt ap-blank" />
      </>
    );
  }
  return (
    <>
      <span className={`ap-ln ${opClass(line.op)}`} aria-hidden="true">
        {side === "old" ? line.old : line.new}
      </span>
      <LineText line={line} segments={words(index)} />
    </>
  );
}

/** The line's marker and text, one text run per changed-or-kept stretch of words. */
function LineText({ line, segments }: { line: DiffLine; segments: Segment[] | null }) {
  const marker = line.op === "=" ? " " : line.op;
  const mark = line.op === "+" ? "ap-wd-add" : "ap-wd-del";
  return (
    <span className={`ap-dt ${opClass(line.op)}`}>
      {marker}{" "}
      {segments
        ? segments.map((segment, index) =>
            segment.changed ? (
              // biome-ignore lint/suspicious/noArrayIndexKey: segments are positional
              <mark key={index} className={mark}>
                {segment.text}
              </mark>
            ) : (
              segment.text
            ),
          )
        : line.text}
    </span>
  );
}

function opClass(op: DiffLine["op"]): string {
  return op === "+" ? "ap-add" : op === "-" ? "ap-del" : "ap-ctx";
}
