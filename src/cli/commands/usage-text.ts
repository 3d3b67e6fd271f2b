// Tokens and prices as people read them, the same in `session show` and `ivoai usage`: tokens as
// in/cached/out, a price the executor never said as "-" or "unknown" (never $0.00), a partly known one as "≥ $x".
import type { AutoState, Usage } from "../../client/session/auto-state.js";
import { sessionPriceComplete, taskPriceComplete } from "../../client/session/usage-report.js";
import { formatTable } from "../output.js";

/** "1040/900/56": input tokens (cached ones included), of them read from the cache, output tokens. */
export function tokensText(
  usage: Pick<Usage, "input_tokens" | "cached_input_tokens" | "output_tokens"> | null,
) {
  return usage ? `${usage.input_tokens}/${usage.cached_input_tokens}/${usage.output_tokens}` : "-";
}

/** "$0.0123"; "≥ $0.0123" when part of the usage came without a price; `unknown` when none had one. */
export function costText(cost: number | null, complete: boolean, unknown = "-"): string {
  if (cost === null) return unknown;
  return `${complete ? "" : "≥ "}$${cost.toFixed(4)}`;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** The TOKENS and COST cells of a task in `session show`'s task table. */
export function taskUsageCells(auto: AutoState, task: AutoState["tasks"][number]): [string, string] {
  return [tokensText(task.usage), costText(task.usage?.cost_usd ?? null, taskPriceComplete(auto, task.id))];
}

/** `session show`'s turns: every listed turn, and how many older ones the record no longer lists. */
export function renderTurns(auto: AutoState): string[] {
  if (auto.usage.turns === 0) return [];
  const dropped = auto.usage.turns - auto.turns.length;
  const lines = [
    `  turns:       ${auto.usage.turns}` +
      (dropped > 0 ? ` (the ${dropped} oldest no longer listed; the totals count them all)` : ""),
  ];
  const table = formatTable(
    ["KIND", "TASK", "EXECUTOR", "STATUS", "TIME", "TOKENS", "COST"],
    auto.turns.map((turn) => [
      turn.kind,
      turn.task_id ?? "-",
      turn.model ? `${turn.executor}/${turn.model}` : turn.executor,
      turn.status,
      seconds(turn.duration_ms),
      tokensText(turn.usage),
      costText(turn.usage?.cost_usd ?? null, true),
    ]),
  );
  lines.push(...table.split("\n").map((line) => `    ${line}`));
  return lines;
}

/** `session show`'s totals: the session's tokens and price, then each executor's share. */
export function renderUsageTotals(auto: AutoState): string[] {
  if (auto.usage.turns === 0) return [];
  const cost = costText(auto.usage.cost_usd, sessionPriceComplete(auto), "unknown");
  const lines = [
    `  usage:       ${tokensText(auto.usage)} tokens (in/cached/out) in ${auto.usage.turns} turn(s), cost ${cost}`,
  ];
  for (const executor of ["codex", "claude"] as const) {
    const usage = auto.usage_by_executor[executor];
    if (!usage) continue;
    const said = costText(usage.cost_usd, true, `unknown (${executor} reported none)`);
    lines.push(`    ${`${executor}:`.padEnd(11)}${tokensText(usage)} tokens, cost ${said}`);
  }
  return lines;
}
