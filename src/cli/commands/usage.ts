// `ivoai usage`: what orchestrated sessions spent, summed by day and executor from the session records, so a
// person sees tokens and price without reading each session (and without an unknown price passing as $0).

import { readUsageReport, type UsageReport, type UsageSum } from "../../client/session/usage-report.js";
import { clientPaths } from "../../config/client-paths.js";
import { IvoaiError } from "../../shared/errors.js";
import { defineCommand } from "../command.js";
import { formatTable } from "../output.js";
import { costText } from "./usage-text.js";

function cells(sum: UsageSum): string[] {
  return [
    String(sum.sessions),
    `${sum.turns_complete ? "" : "≥ "}${sum.turns}`,
    String(sum.input_tokens),
    String(sum.cached_input_tokens),
    String(sum.output_tokens),
    costText(sum.cost_usd, sum.cost_complete, "unknown"),
  ];
}

function rangeText(report: UsageReport): string {
  if (report.since && report.until) return ` started from ${report.since} until ${report.until}`;
  if (report.since) return ` started since ${report.since}`;
  if (report.until) return ` started before ${report.until}`;
  return "";
}

/** The table, its totals and what the markers mean; an empty range says so. */
export function renderUsageReport(report: UsageReport): string {
  if (report.rows.length === 0)
    return `no usage: no orchestrated session${rangeText(report)} spent any tokens`;
  const rows = [
    ...report.rows.map((row) => [row.day, row.executor, ...cells(row)]),
    ...report.by_executor.map((sum) => ["total", sum.executor, ...cells(sum)]),
    ["total", "all", ...cells(report.totals)],
  ];
  const lines = [
    `Orchestrated sessions${rangeText(report)}, by the UTC day each session started and executor (tokens: INPUT includes CACHED):`,
    formatTable(["DAY", "EXECUTOR", "SESSIONS", "TURNS", "INPUT", "CACHED", "OUTPUT", "COST"], rows),
  ];
  if (!report.totals.cost_complete)
    lines.push("≥: a lower bound; unknown: the executor reported no price (codex never does).");
  if (report.rows.some((row) => !row.turns_complete))
    lines.push("≥ turns: a session keeps its last 64 turns listed per executor; its total turns are exact.");
  return lines.join("\n");
}

export const usageCommand = defineCommand({
  name: "usage",
  summary: "Tokens and cost of orchestrated sessions by day (UTC) and executor",
  description:
    "Sums every orchestrated session's usage (ivoai auto) by the UTC day it started and by executor, with totals.\n" +
    "A price an executor did not report is unknown, never $0: a sum with unknown parts is shown as a lower\n" +
    "bound (≥ $x) and has cost_complete: false in --json.",
  json: true,
  options: {
    since: {
      type: "instant",
      value: "WHEN",
      description: "only sessions started at or after WHEN",
    },
    until: {
      type: "instant",
      value: "WHEN",
      description: "only sessions started before WHEN",
    },
  },
  async run(ctx) {
    const { since, until } = ctx.options;
    if (since !== undefined && until !== undefined && Date.parse(since) >= Date.parse(until))
      throw new IvoaiError("USAGE", `--since (${since}) must be before --until (${until})`);
    const report = await readUsageReport(clientPaths(ctx.env).stateDir, { since, until });
    ctx.out.data(report, renderUsageReport);
    return 0;
  },
});
