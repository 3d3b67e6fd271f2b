// A unified diff shown as lines of text; added/removed lines coloured by class. Never parsed as markup.
const MAX_LINES = 5000;

export function DiffView({ diff, label }: { diff: string; label: string }) {
  if (diff.length === 0) return <p className="muted">No diff (nothing to show for this action).</p>;
  const all = diff.split("\n");
  const lines = all.slice(0, MAX_LINES);
  return (
    <>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
      <section className="diff-box" aria-label={label} tabIndex={0}>
        <pre className="diff">
          {lines.map((line, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: lines are positional
            <span key={index} className={`diff-line ${lineClass(line)}`}>
              {line}
              {"\n"}
            </span>
          ))}
        </pre>
      </section>
      {all.length > MAX_LINES && <p className="muted">{all.length - MAX_LINES} more lines not shown.</p>}
    </>
  );
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "diff-file";
  if (line.startsWith("@@")) return "diff-hunk";
  if (line.startsWith("+")) return "diff-add";
  if (line.startsWith("-")) return "diff-del";
  return "diff-ctx";
}
