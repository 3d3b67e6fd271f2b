// The text rendering of `server eval`'s report: a table of methods, then each difference and its queries.
import type { EvalReport, Interval } from "../../server/eval/index.js";
import { oneLine } from "../../shared/terminal-text.js";
import { formatTable } from "../output.js";

type Change = EvalReport["differences"][number]["won"][number];

export function renderEvalReport(report: EvalReport & { hint?: string }): string {
  const recall = `recall@${report.k}`;
  const lines = [
    `${report.queries} queries (${report.source}), ${report.judged_documents} judged documents; ` +
      `95 % intervals from a paired bootstrap (${report.bootstrap.resamples} resamples, seed ${report.bootstrap.seed})`,
    "",
    formatTable(
      ["METHOD", "nDCG@10", recall.toUpperCase(), "MRR@10"],
      report.methods.map((m) => [m.method, interval(m.ndcg10), interval(m.recall), interval(m.mrr10)]),
    ),
  ];
  for (const diff of report.differences) {
    lines.push(
      "",
      `${diff.method} − ${diff.against}: nDCG@10 ${interval(diff.ndcg10, true)}, ${recall} ${interval(diff.recall, true)}, ` +
        `MRR@10 ${interval(diff.mrr10, true)}${verdict(diff.ndcg10)}`,
    );
    for (const [title, changes] of [
      ["won most", diff.won],
      ["lost most", diff.lost],
    ] as const) {
      if (changes.length === 0) continue;
      lines.push(`  ${title} (nDCG@10 ${diff.against} → ${diff.method}):`);
      for (const change of changes) lines.push(`    ${changeLine(change, diff.against, diff.method)}`);
    }
  }
  if (report.hint) lines.push("", report.hint);
  return lines.join("\n");
}

function interval(value: Interval, signed = false): string {
  const f = (n: number) => `${signed && n >= 0 ? "+" : ""}${n.toFixed(3)}`;
  return `${f(value.mean)} [${f(value.low)}, ${f(value.high)}]`;
}

function verdict(diff: Interval): string {
  if (diff.low > 0) return " (better)";
  if (diff.high < 0) return " (worse)";
  return " (no clear difference)";
}

function changeLine(change: Change, against: string, method: string): string {
  const text = oneLine(change.text);
  const cut = text.length > 70 ? `${text.slice(0, 69)}…` : text;
  const from = (change.ndcg10[against] ?? 0).toFixed(3);
  const to = (change.ndcg10[method] ?? 0).toFixed(3);
  return `${change.id}: ${from} → ${to}  ${cut}`;
}
