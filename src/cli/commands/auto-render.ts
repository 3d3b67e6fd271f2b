// `ivoai session show` for an orchestrated session: the route, the plan's tasks (ids, dependencies, scores,
// tiers, profiles and their origin, states, durations, tokens and cost, escalations), the turns, the session's
// usage per executor, failovers and the last checkpoint.
import type { AutoState } from "../../client/session/auto-state.js";
import { oneLine } from "../../shared/terminal-text.js";
import { formatTable } from "../output.js";
import { renderTurns, renderUsageTotals, taskUsageCells } from "./usage-text.js";

const seconds = (ms: number | null) => (ms === null ? "-" : `${(ms / 1000).toFixed(1)}s`);

/** "mindsite; failed acme (timeout); excluded old (disabled)" — one short line, reasons cut. */
function sourcesText(sources: NonNullable<AutoState["sources"]>): string {
  const listed = (entries: { alias: string; reason: string }[]) =>
    entries.map((entry) => `${entry.alias} (${oneLine(entry.reason).slice(0, 60)})`).join(", ");
  const failed = new Set(sources.failed.map((entry) => entry.alias));
  const answered = sources.selected.filter((alias) => !failed.has(alias));
  return [
    answered.length > 0 ? answered.join(", ") : "none answered",
    sources.failed.length > 0 ? `failed ${listed(sources.failed)}` : "",
    sources.excluded.length > 0 ? `excluded ${listed(sources.excluded)}` : "",
  ]
    .filter(Boolean)
    .join("; ");
}

export function renderAutoState(auto: AutoState): string {
  const lines = [
    `  auto:        ${auto.phase} (checkpoint ${auto.checkpoint.seq} at ${auto.checkpoint.at})`,
    `  route:       ${auto.route ? `${auto.route.kind} — ${auto.route.reason}` : "-"}`,
    `  planner:     ${auto.planner}; primary now ${auto.primary}; workers ${auto.workers}`,
    `  knowledge:   ${auto.knowledge ? `memory ${auto.knowledge.memory}, context ${auto.knowledge.context}, brief ${auto.knowledge.brief_bytes} bytes` : "-"}`,
  ];
  if (auto.sources) lines.push(`  sources:     ${sourcesText(auto.sources)}`);
  if (auto.plan) {
    lines.push(
      `  plan:        ${auto.plan.tasks} task(s), ${auto.plan.attempts} attempt(s)${auto.plan.repaired ? ", repaired" : ""}` +
        (auto.scheduling_overhead_ms === null
          ? ""
          : `, scheduling overhead ${auto.scheduling_overhead_ms} ms`),
    );
  }
  if (auto.tasks.length > 0) {
    const table = formatTable(
      [
        "TASK",
        "KIND",
        "AFTER",
        "SCORE",
        "TIER",
        "PROFILE",
        "ORIGIN",
        "STATE",
        "TIME",
        "TOKENS",
        "COST",
        "REFS",
      ],
      auto.tasks.map((task) => [
        task.id,
        task.kind,
        task.depends_on.join(",") || "-",
        task.score.toFixed(2),
        String(task.tier),
        task.profile ? `${task.profile.executor}/${task.profile.model}/${task.profile.effort}` : "primary",
        task.profile_origin,
        task.state,
        seconds(task.duration_ms),
        ...taskUsageCells(auto, task),
        String(task.refs.length),
      ]),
    );
    lines.push(...table.split("\n").map((line) => `    ${line}`));
    for (const task of auto.tasks) {
      if (task.reason) lines.push(`    ${task.id}: ${task.reason}`);
      for (const escalation of task.escalations) lines.push(`    ${task.id}: escalated — ${escalation}`);
    }
  }
  lines.push(...renderTurns(auto), ...renderUsageTotals(auto));
  for (const failover of auto.failovers) {
    lines.push(
      `  failover:    ${failover.at} ${failover.from} → ${failover.to}${failover.task_id ? ` (task ${failover.task_id})` : ""}: ${failover.reason}` +
        (failover.handoff_ms === null ? "" : ` [${failover.handoff_ms} ms to the first event]`),
    );
  }
  for (const [executor, pressure] of Object.entries(auto.context_pressure)) {
    lines.push(`  context:     ${executor} window ${Math.round(pressure.ratio * 100)}% (${pressure.level})`);
  }
  const refused = auto.admissions.filter((admission) => !admission.admitted);
  for (const admission of refused.slice(-3))
    lines.push(`  admission:   ${admission.executor} refused — ${admission.reason}`);
  if (auto.error) lines.push(`  stopped:     ${auto.error}`);
  return lines.join("\n");
}
