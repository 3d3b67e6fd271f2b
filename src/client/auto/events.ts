// The one event stream of an AUTO session. Every event is derived from the checkpointed state the recorder
// keeps (a task's state changing, a failover recorded, a turn's usage), so what people watch is exactly what
// `session show` and `session resume` read. The stream goes to the caller (headless stderr lines, --json
// JSON Lines, the OpenCode frontend) and to a private per-session file that `ivoai session watch` follows.
//
// Schema, version 1 (AUTO_EVENT_VERSION): every event is one JSON object with
//   v        1
//   seq      1, 2, 3, … within the session (a resumed session goes on counting)
//   at       ISO 8601 time the change was recorded
//   session  the session id
//   type     one of AUTO_EVENT_TYPES; the fields after it depend on the type (see AutoEvent).
// Fields are only ever added within a version; a renamed or removed field is a new version.
import type { AutoState, AutoTask, Usage } from "../session/auto-state.js";

export const AUTO_EVENT_VERSION = 1;

export const AUTO_EVENT_TYPES = [
  "session.started",
  "phase",
  "sources",
  "plan",
  "task.added",
  "task.started",
  "task.done",
  "task.failed",
  "task.skipped",
  "task.cancelled",
  "task.primary",
  "task.escalated",
  "failover",
  "turn",
  "heartbeat",
  "session.ended",
] as const;
export type AutoEventType = (typeof AUTO_EVENT_TYPES)[number];

/** n of m: tasks that ended (done, failed, skipped, cancelled) of all on record, and those running now. */
export interface Progress {
  done: number;
  total: number;
  running: string[];
  /** Milliseconds since the session (or its resume) started (startedAt is a performance.now() reading). */
  elapsed_ms: number;
}

interface Envelope {
  v: typeof AUTO_EVENT_VERSION;
  seq: number;
  at: string;
  session: string;
}

export type TaskEventType = Extract<AutoEventType, `task.${string}`>;

/** A task's state change: who ran it, how long it took, what it cost, and where the plan stands. */
export interface TaskEvent extends Envelope {
  type: TaskEventType;
  task_id: string;
  kind: AutoTask["kind"];
  origin: AutoTask["origin"];
  executor: string | null;
  model: string | null;
  effort: string | null;
  profile_origin: AutoTask["profile_origin"];
  duration_ms: number | null;
  usage: Usage | null;
  /** Why it failed, was skipped, escalated or went to the primary; null otherwise. */
  reason: string | null;
  progress: Progress;
}

export type AutoEvent =
  | (Envelope & {
      type: "session.started";
      planner: string;
      primary: string;
      workers: number;
      /** The checkpoint a resumed session continues from; null for a new session. */
      resumed_from: number | null;
    })
  | (Envelope & { type: "phase"; phase: AutoState["phase"]; progress: Progress })
  | (Envelope & { type: "sources" } & NonNullable<AutoState["sources"]>)
  | (Envelope & {
      type: "plan";
      tasks: number;
      on_workers: number;
      in_primary: number;
      attempts: number;
      repaired: boolean;
    })
  | TaskEvent
  | (Envelope & { type: "failover" } & AutoState["failovers"][number])
  | (Envelope & { type: "turn" } & AutoState["turns"][number])
  | (Envelope & { type: "heartbeat"; phase: AutoState["phase"]; progress: Progress })
  | (Envelope & {
      type: "session.ended";
      phase: AutoState["phase"];
      exit_code: number;
      error: string | null;
      usage: AutoState["usage"];
      progress: Progress;
    });

/** An event before its envelope is filled in. */
export type AutoEventBody = AutoEvent extends infer E
  ? E extends AutoEvent
    ? Omit<E, keyof Envelope>
    : never
  : never;

const TASK_EVENT: Partial<Record<AutoTask["state"], TaskEventType>> = {
  running: "task.started",
  done: "task.done",
  failed: "task.failed",
  skipped: "task.skipped",
  cancelled: "task.cancelled",
  primary: "task.primary",
};

export const ENDED_TASK_STATES: ReadonlySet<AutoTask["state"]> = new Set([
  "done",
  "failed",
  "skipped",
  "cancelled",
]);

/** Where `state`'s plan stands; `startedAt` is the session's start on the monotonic clock (`performance.now()`). */
export function progressOf(state: AutoState, startedAt: number): Progress {
  return {
    done: state.tasks.filter((task) => ENDED_TASK_STATES.has(task.state)).length,
    total: state.tasks.length,
    running: state.tasks.filter((task) => task.state === "running").map((task) => task.id),
    elapsed_ms: Math.max(0, Math.round(performance.now() - startedAt)),
  };
}

/** What the differ remembers of the last state it saw. */
interface Seen {
  phase: AutoState["phase"];
  tasks: Map<string, { state: AutoTask["state"]; escalations: number }>;
  failovers: number;
  joined: number;
  turns: number;
  sources: string | null;
  plan: string | null;
}

export interface EventDiffer {
  /** The events the change from the last state seen to `state` makes, in a stable order. */
  next(state: AutoState): AutoEventBody[];
}

/** Derives events from successive states; `initial` is what the caller has already announced. */
export function createEventDiffer(initial: AutoState, startedAt: number): EventDiffer {
  const seen: Seen = {
    phase: initial.phase,
    tasks: new Map(initial.tasks.map((task) => [task.id, taskSeen(task)])),
    failovers: initial.failovers.length,
    joined: joinedCount(initial),
    turns: initial.usage.turns,
    sources: initial.sources ? JSON.stringify(initial.sources) : null,
    plan: initial.plan
      ? `${JSON.stringify(initial.plan)}:${initial.tasks.filter((task) => task.origin === "plan").length}`
      : null,
  };
  return {
    next(state) {
      const out: AutoEventBody[] = [];
      const sources = state.sources ? JSON.stringify(state.sources) : null;
      if (state.sources && sources !== seen.sources) out.push({ type: "sources", ...state.sources });
      seen.sources = sources;
      // The plan is announced once its tasks are on record (the decisions come after the planning turn).
      const planned = state.tasks.filter((task) => task.origin === "plan").length;
      const plan = state.plan ? `${JSON.stringify(state.plan)}:${planned}` : null;
      if (state.plan && plan !== seen.plan && state.plan.tasks > 0 && planned >= state.plan.tasks) {
        out.push(planEvent(state));
        seen.plan = plan;
      }
      out.push(...newTurns(state, seen));
      out.push(...newFailovers(state, seen));
      for (const task of state.tasks) out.push(...taskEvents(task, state, seen, startedAt));
      if (state.phase !== seen.phase) {
        seen.phase = state.phase;
        out.push({ type: "phase", phase: state.phase, progress: progressOf(state, startedAt) });
      }
      return out;
    },
  };
}

function taskSeen(task: AutoTask) {
  return { state: task.state, escalations: task.escalations.length };
}

function joinedCount(state: AutoState): number {
  return state.failovers.reduce((sum, entry) => sum + entry.joined.length, 0);
}

function planEvent(state: AutoState): AutoEventBody {
  const plan = state.plan as NonNullable<AutoState["plan"]>;
  const planned = state.tasks.filter((task) => task.origin === "plan");
  const onWorkers = planned.filter((task) => task.profile !== null).length;
  return {
    type: "plan",
    tasks: plan.tasks,
    on_workers: onWorkers,
    in_primary: planned.length - onWorkers,
    attempts: plan.attempts,
    repaired: plan.repaired,
  };
}

function newTurns(state: AutoState, seen: Seen): AutoEventBody[] {
  const fresh = Math.min(state.usage.turns - seen.turns, state.turns.length);
  seen.turns = state.usage.turns;
  return fresh > 0 ? state.turns.slice(-fresh).map((turn) => ({ type: "turn" as const, ...turn })) : [];
}

function newFailovers(state: AutoState, seen: Seen): AutoEventBody[] {
  const out: AutoEventBody[] = state.failovers
    .slice(seen.failovers)
    .map((entry) => ({ type: "failover" as const, ...entry }));
  seen.failovers = state.failovers.length;
  // A task (or the primary) joining an earlier failover is a failover of its own for the person watching.
  const joined = joinedCount(state);
  if (joined > seen.joined && out.length === 0) {
    const last = state.failovers.at(-1);
    if (last) out.push({ type: "failover", ...last });
  }
  seen.joined = joined;
  return out;
}

function taskEvents(task: AutoTask, state: AutoState, seen: Seen, startedAt: number): AutoEventBody[] {
  const before = seen.tasks.get(task.id);
  seen.tasks.set(task.id, taskSeen(task));
  const out: AutoEventBody[] = [];
  if (!before && task.origin === "delegated") out.push(taskEvent("task.added", task, state, startedAt));
  if ((before?.escalations ?? 0) < task.escalations.length) {
    const event = taskEvent("task.escalated", task, state, startedAt);
    event.reason = task.escalations.at(-1) ?? null;
    out.push(event);
  }
  // A new plan's tasks are announced by the plan event; only their later changes are events.
  if (!before) return out;
  if (before.state === task.state) return out;
  const type = TASK_EVENT[task.state];
  if (type) out.push(taskEvent(type, task, state, startedAt));
  return out;
}

function taskEvent(
  type: TaskEventType,
  task: AutoTask,
  state: AutoState,
  startedAt: number,
): Omit<TaskEvent, keyof Envelope> {
  return {
    type,
    task_id: task.id,
    kind: task.kind,
    origin: task.origin,
    executor: task.profile?.executor ?? (task.state === "primary" ? state.primary : null),
    model: task.profile?.model ?? null,
    effort: task.profile?.effort ?? null,
    profile_origin: task.profile_origin,
    duration_ms: task.duration_ms,
    usage: task.usage,
    reason: type === "task.started" || type === "task.done" ? null : task.reason,
    progress: progressOf(state, startedAt),
  };
}
