// The frontend's view of its AUTO turns: fed every event of their sessions' streams (AutoOptions.onProgress), it
// keeps what the TUI plugin shows (plan progress, running tasks, elapsed, failovers, tokens, sources, the outcome),
// bounded whatever the sessions do.
import type { AutoEvent, Progress } from "../../auto/events.js";
import type { AutoStatus, SourceNote } from "./status.js";

/** Running tasks named in a snapshot; more are only counted. */
export const MAX_RUNNING_SHOWN = 8;
/** Entries of each sources list in a snapshot. */
export const MAX_SOURCES_SHOWN = 16;
/** Sessions remembered at once (two OpenCode conversations can each run a turn). */
const MAX_TRACKED = 4;
const MAX_NAME = 80;
const MAX_REASON = 160;

export interface AutoProgress {
  /** Takes one event of any session's stream. */
  observe(event: AutoEvent): void;
  /** The most recently started session still running, else the one that started last; null before any. */
  snapshot(): AutoStatus | null;
}

export interface AutoProgressDeps {
  /** Milliseconds, monotonic: the elapsed time of a running session goes on between its events. */
  now(): number;
}

interface Tracked {
  status: AutoStatus;
  /** now() when status.elapsed_ms was last taken from an event. */
  elapsedAt: number;
  /** Executor and model of each task seen starting (a session has at most 40 tasks). */
  profiles: Map<string, { executor: string | null; model: string | null }>;
  /** The tasks whose last event was task.done. */
  completed: Set<string>;
  /** Running task ids as the last progress said. */
  runningIds: string[];
  startedOrder: number;
}

export function createAutoProgress(deps: AutoProgressDeps = { now: () => performance.now() }): AutoProgress {
  const sessions = new Map<string, Tracked>();
  let order = 0;
  const tracked = (id: string): Tracked => {
    let entry = sessions.get(id);
    if (!entry) {
      order += 1;
      entry = newTracked(id, deps.now(), order);
      sessions.set(id, entry);
      // Maps iterate in insertion order: the first key is the session that started longest ago.
      if (sessions.size > MAX_TRACKED) sessions.delete(sessions.keys().next().value as string);
    }
    return entry;
  };
  return {
    observe(event) {
      apply(tracked(event.session), event, deps.now());
    },
    snapshot() {
      const all = [...sessions.values()].sort((a, b) => b.startedOrder - a.startedOrder);
      const shown = all.find((entry) => entry.status.active) ?? all[0];
      return shown ? view(shown, deps.now()) : null;
    },
  };
}

function newTracked(sessionId: string, now: number, startedOrder: number): Tracked {
  return {
    status: {
      session_id: sessionId.slice(0, MAX_NAME),
      phase: "starting",
      active: true,
      done: 0,
      total: 0,
      completed: 0,
      running: [],
      running_count: 0,
      elapsed_ms: 0,
      failovers: 0,
      tokens: { input: 0, output: 0, cost_usd: null },
      sources: null,
      exit_code: null,
      error: null,
    },
    elapsedAt: now,
    profiles: new Map(),
    completed: new Set(),
    runningIds: [],
    startedOrder,
  };
}

function apply(entry: Tracked, event: AutoEvent, now: number): void {
  const { status } = entry;
  switch (event.type) {
    case "session.started":
    case "task.added":
      break;
    case "phase":
    case "heartbeat":
      status.phase = event.phase;
      takeProgress(entry, event.progress, now);
      break;
    case "plan":
      status.total = Math.max(status.total, event.tasks);
      break;
    case "sources":
      status.sources = {
        configured: names(event.configured),
        selected: names(event.selected),
        excluded: notes(event.excluded),
        failed: notes(event.failed),
      };
      break;
    case "failover":
      status.failovers += 1;
      break;
    case "turn":
      if (event.usage) addTokens(status, event.usage);
      break;
    case "session.ended":
      status.phase = event.phase;
      status.active = false;
      status.exit_code = event.exit_code;
      status.error = event.error?.slice(0, MAX_REASON) ?? null;
      status.tokens = {
        input: event.usage.input_tokens,
        output: event.usage.output_tokens,
        cost_usd: event.usage.cost_usd,
      };
      takeProgress(entry, event.progress, now);
      break;
    default:
      entry.profiles.set(event.task_id, { executor: event.executor, model: event.model });
      if (event.type === "task.done") entry.completed.add(event.task_id);
      else entry.completed.delete(event.task_id);
      status.completed = entry.completed.size;
      takeProgress(entry, event.progress, now);
  }
}

function takeProgress(entry: Tracked, progress: Progress, now: number): void {
  entry.status.done = progress.done;
  entry.status.total = progress.total;
  entry.status.elapsed_ms = progress.elapsed_ms;
  entry.elapsedAt = now;
  entry.runningIds = progress.running;
}

function addTokens(
  status: AutoStatus,
  usage: { input_tokens: number; output_tokens: number; cost_usd: number | null },
) {
  status.tokens.input += usage.input_tokens;
  status.tokens.output += usage.output_tokens;
  if (usage.cost_usd !== null) status.tokens.cost_usd = (status.tokens.cost_usd ?? 0) + usage.cost_usd;
}

/** A copy for the endpoint, with the running tasks named and a running session's elapsed time brought up to now. */
function view(entry: Tracked, now: number): AutoStatus {
  const { status } = entry;
  const running = entry.runningIds.slice(0, MAX_RUNNING_SHOWN).map((id) => ({
    id: id.slice(0, MAX_NAME),
    executor: entry.profiles.get(id)?.executor?.slice(0, MAX_NAME) ?? null,
    model: entry.profiles.get(id)?.model?.slice(0, MAX_NAME) ?? null,
  }));
  const elapsed = status.active ? status.elapsed_ms + Math.max(0, now - entry.elapsedAt) : status.elapsed_ms;
  return {
    ...structuredClone(status),
    running,
    running_count: entry.runningIds.length,
    elapsed_ms: Math.round(elapsed),
  };
}

function names(list: readonly string[]): string[] {
  return list.slice(0, MAX_SOURCES_SHOWN).map((name) => name.slice(0, MAX_NAME));
}

function notes(list: readonly SourceNote[]): SourceNote[] {
  return list
    .slice(0, MAX_SOURCES_SHOWN)
    .map((note) => ({ alias: note.alias.slice(0, MAX_NAME), reason: note.reason.slice(0, MAX_REASON) }));
}
