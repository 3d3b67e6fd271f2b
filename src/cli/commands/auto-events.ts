// An AUTO event as the one line a person reads on stderr (`ivoai auto`, `ivoai session watch`): what happened,
// where the plan stands, who ran it, how long it took and what it cost. Lines carry only metadata the session
// record already holds, escaped for the terminal.
import type { AutoEvent, Progress, TaskEvent } from "../../client/auto/events.js";
import type { Usage } from "../../client/session/auto-state.js";
import { oneLine } from "../../shared/terminal-text.js";

const seconds = (ms: number | null) => (ms === null ? "" : `${(ms / 1000).toFixed(1)}s`);

/** "12.3k tokens, $0.0123" — tokens in and out, and the price when the vendor said one. */
export function usageText(usage: Usage | null | undefined): string {
  if (!usage) return "";
  const tokens = usage.input_tokens + usage.output_tokens;
  const count = tokens >= 10_000 ? `${(tokens / 1000).toFixed(1)}k` : String(tokens);
  return `${count} tokens${usage.cost_usd === null ? "" : `, $${usage.cost_usd.toFixed(4)}`}`;
}

const counter = (progress: Progress) => `[${progress.done}/${progress.total}]`;

function taskLine(event: TaskEvent): string {
  const verb = event.type.slice("task.".length);
  const who = event.executor
    ? `${event.executor}${event.model ? ` ${event.model}${event.effort ? `/${event.effort}` : ""}` : ""}`
    : "";
  const parts = [
    `${counter(event.progress)} ${event.task_id} ${verb === "primary" ? "goes to the primary" : verb}`,
    who && verb !== "primary" ? who : "",
    event.type === "task.started" ? "" : seconds(event.duration_ms),
    event.type === "task.started" ? "" : usageText(event.usage),
  ].filter(Boolean);
  const reason = event.reason ? ` — ${oneLine(event.reason).slice(0, 200)}` : "";
  return `${parts.join(" · ")}${reason}`;
}

/**
 * The line for one event, without the "ivoai auto: " prefix; null for events people need not see as lines.
 * `all`: also the start, phases, the plan and failovers, which the running session says in its own notices
 * (`session watch` has only the events).
 */
export function describeAutoEvent(event: AutoEvent, all = false): string | null {
  if (all) {
    const line = noticeLine(event);
    if (line !== null) return line;
  }
  switch (event.type) {
    case "sources": {
      const failed = event.failed.map((entry) => `${entry.alias} (${oneLine(entry.reason).slice(0, 120)})`);
      if (failed.length === 0) return null;
      const answered = event.selected.filter((alias) => !event.failed.some((entry) => entry.alias === alias));
      return `knowledge is partial: ${failed.join(", ")} did not answer; using ${answered.join(", ") || "nothing"}`;
    }
    case "task.started":
    case "task.done":
    case "task.failed":
    case "task.skipped":
    case "task.cancelled":
    case "task.escalated":
    case "task.primary":
    case "task.added":
      return taskLine(event);
    case "turn":
      if (event.task_id !== null) return null;
      return `${event.kind} turn ${event.status} · ${event.executor} · ${seconds(event.duration_ms)}${event.usage ? ` · ${usageText(event.usage)}` : ""}`;
    case "heartbeat": {
      const running = event.progress.running.join(", ");
      return `${counter(event.progress)} ${event.phase}${running ? ` · working on ${running}` : ""} · ${seconds(event.progress.elapsed_ms)} so far`;
    }
    case "session.ended": {
      const used = usageText(event.usage);
      return `session ${event.phase} (exit ${event.exit_code}) · ${counter(event.progress)} tasks · ${seconds(event.progress.elapsed_ms)}${used ? ` · ${used} in ${event.usage.turns} turn(s)` : ""}`;
    }
    default:
      // The start, phases, the plan and failovers already have their own notice lines.
      return null;
  }
}

function noticeLine(event: AutoEvent): string | null {
  switch (event.type) {
    case "session.started":
      return `${event.resumed_from === null ? "session started" : `session resumed from checkpoint ${event.resumed_from}`} · planner ${event.planner}, primary ${event.primary}, ${event.workers} worker(s)`;
    case "phase":
      return `${counter(event.progress)} ${event.phase}`;
    case "plan":
      return `plan of ${event.tasks} task(s): ${event.on_workers} on workers, ${event.in_primary} in the primary${event.repaired ? " (repaired)" : ""}`;
    case "failover":
      return `failover ${event.from} → ${event.to}${event.task_id ? ` for task ${event.task_id}` : ""}${event.joined.length ? ` (with ${event.joined.join(", ")})` : ""}: ${oneLine(event.reason).slice(0, 160)}${event.resets_at ? `; resets ${event.resets_at}` : ""}`;
    default:
      return null;
  }
}
