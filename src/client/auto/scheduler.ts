// Runs a validated plan's worker tasks as a DAG: a task starts when its dependencies are done, never more than
// the concurrency cap at once, in plan order; failures skip their dependents, an abort cancels what waits.
import { performance } from "node:perf_hooks";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { DEFAULT_WORKERS, MAX_WORKERS, type PlanTask, type TaskState } from "./contracts.js";

/** What accompanies a state change (for records: metadata only). */
export interface TaskChangeInfo {
  /** Why a task was skipped, cancelled or failed; null otherwise. */
  reason: string | null;
  /** Time inside runTask, once it ended. */
  durationMs: number | null;
}

export interface RunDagOptions {
  /** Workers at once; clamped to 1..MAX_WORKERS (DEFAULT_WORKERS when not a number). */
  concurrency: number;
  /** Runs one worker task. A throw counts as "failed". The signal fires when the DAG is aborted. */
  runTask: (task: PlanTask, signal: AbortSignal) => Promise<"done" | "failed">;
  /** Tasks the primary runs itself: never started here, and they count as done for their dependents. */
  isPrimaryTask: (task: PlanTask) => boolean;
  /** Tasks already done before this run (a resumed session's): never started again. */
  isDone?: (task: PlanTask) => boolean;
  /** Called synchronously at every state change; its time counts as scheduler overhead. */
  onChange?: (taskId: string, state: TaskState, info: TaskChangeInfo) => void;
  signal?: AbortSignal;
}

export interface DagResult {
  /** Final state of every task, in plan order. */
  states: Map<string, TaskState>;
  /** Milliseconds the scheduler itself spent (bookkeeping, not inside runTask). */
  overheadMs: number;
  /** Milliseconds from start to return. */
  wallMs: number;
  /** Most tasks that ran at once. */
  maxConcurrent: number;
}

/** Clamps a requested worker count to 1..MAX_WORKERS. */
export function clampConcurrency(requested: number): number {
  if (!Number.isFinite(requested)) return DEFAULT_WORKERS;
  return Math.min(MAX_WORKERS, Math.max(1, Math.floor(requested)));
}

const SATISFIED: ReadonlySet<TaskState> = new Set(["done", "primary"]);
const BROKEN: ReadonlySet<TaskState> = new Set(["failed", "skipped", "cancelled"]);

/** One DAG run: every task's state, what runs, the time the scheduler itself took, and how it ends. */
interface DagRun {
  readonly tasks: readonly PlanTask[];
  readonly options: RunDagOptions;
  readonly started: number;
  readonly cap: number;
  readonly states: Map<string, TaskState>;
  readonly controller: AbortController;
  /** Listens to the caller's signal; removed once the run is over. */
  readonly onAbort: () => void;
  readonly finish: (result: DagResult) => void;
  readonly fail: (error: unknown) => void;
  overheadMs: number;
  running: number;
  maxConcurrent: number;
  /** The first throw from onChange, re-thrown once every task ended. */
  callbackError: unknown;
}

/**
 * Runs the DAG until nothing more can run. Tasks blocked forever (unknown dependency, cycle: an unvalidated
 * plan) end "skipped". After an abort, running tasks get the signal; a running task that then fails ends
 * "cancelled", pending ones are "cancelled" at once. A throw from onChange is re-thrown once all tasks ended.
 */
export function runDag(tasks: readonly PlanTask[], options: RunDagOptions): Promise<DagResult> {
  const started = performance.now();
  const states = new Map<string, TaskState>();
  for (const task of tasks) {
    if (states.has(task.id)) throw new IvoaiError("INTERNAL", `duplicate task id in plan: ${task.id}`);
    states.set(task.id, "pending");
  }
  let finish: (result: DagResult) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const result = new Promise<DagResult>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const run: DagRun = {
    tasks,
    options,
    started,
    cap: clampConcurrency(options.concurrency),
    states,
    controller: new AbortController(),
    onAbort: () => step(run, () => run.controller.abort(options.signal?.reason)),
    finish,
    fail,
    overheadMs: 0,
    running: 0,
    maxConcurrent: 0,
    callbackError: undefined,
  };
  step(run, () => {
    for (const task of tasks) {
      if (options.isDone?.(task)) run.states.set(task.id, "done");
      else if (options.isPrimaryTask(task)) set(run, task.id, "primary");
    }
    if (options.signal?.aborted) run.controller.abort(options.signal.reason);
    else options.signal?.addEventListener("abort", run.onAbort, { once: true });
  });
  return result;
}

function set(
  run: DagRun,
  id: string,
  state: TaskState,
  reason: string | null = null,
  durationMs: number | null = null,
): void {
  run.states.set(id, state);
  try {
    run.options.onChange?.(id, state, { reason, durationMs });
  } catch (error) {
    run.callbackError ??= error;
  }
}

/** Every entry into the scheduler: timed as overhead, then starts what can start, then maybe finishes. */
function step(run: DagRun, work: () => void): void {
  const began = performance.now();
  work();
  const finished = pump(run);
  run.overheadMs += performance.now() - began;
  if (!finished) return;
  run.options.signal?.removeEventListener("abort", run.onAbort);
  const wallMs = performance.now() - run.started;
  if (run.callbackError !== undefined) run.fail(run.callbackError);
  else {
    run.finish({
      states: run.states,
      overheadMs: Math.max(0, run.overheadMs),
      wallMs,
      maxConcurrent: run.maxConcurrent,
    });
  }
}

function settle(run: DagRun, task: PlanTask, outcome: "done" | "failed" | Error, taskStarted: number): void {
  step(run, () => {
    run.running -= 1;
    const durationMs = Math.round(performance.now() - taskStarted);
    if (outcome === "done") set(run, task.id, "done", null, durationMs);
    else {
      const reason =
        outcome === "failed"
          ? "the task failed"
          : `the task threw: ${oneLine(outcome.message.slice(0, 200))}`;
      set(run, task.id, run.controller.signal.aborted ? "cancelled" : "failed", reason, durationMs);
    }
  });
}

function start(run: DagRun, task: PlanTask): void {
  run.running += 1;
  run.maxConcurrent = Math.max(run.maxConcurrent, run.running);
  set(run, task.id, "running");
  const taskStarted = performance.now();
  let pending: Promise<"done" | "failed">;
  try {
    pending = run.options.runTask(task, run.controller.signal);
  } catch (error) {
    pending = Promise.reject(error);
  }
  // The synchronous part of runTask is executor time, not scheduler overhead.
  run.overheadMs -= performance.now() - taskStarted;
  pending.then(
    (outcome) => settle(run, task, outcome === "done" ? "done" : "failed", taskStarted),
    (error: unknown) =>
      settle(run, task, error instanceof Error ? error : new Error(String(error)), taskStarted),
  );
}

/** Starts what can start; true when nothing runs and nothing more can. */
function pump(run: DagRun): boolean {
  const { tasks, states } = run;
  if (run.controller.signal.aborted) {
    for (const task of tasks) {
      if (states.get(task.id) === "pending") set(run, task.id, "cancelled", "the session was aborted");
    }
  }
  skipBrokenDependents(run);
  for (const task of tasks) {
    if (run.running >= run.cap) break;
    if (states.get(task.id) !== "pending") continue;
    if (task.depends_on.every((id) => SATISFIED.has(states.get(id) ?? "pending"))) start(run, task);
  }
  if (run.running > 0) return false;
  for (const task of tasks) {
    if (states.get(task.id) === "pending")
      set(run, task.id, "skipped", "blocked: unknown dependency or cycle");
  }
  return true;
}

/** Failures propagate first, transitively, in plan order (a fixed point: plans are small). */
function skipBrokenDependents(run: DagRun): void {
  for (let changed = true; changed; ) {
    changed = false;
    for (const task of run.tasks) {
      if (run.states.get(task.id) !== "pending") continue;
      const broken = task.depends_on.find((id) => BROKEN.has(run.states.get(id) ?? "pending"));
      if (broken !== undefined) {
        set(run, task.id, "skipped", `dependency ${broken} ${run.states.get(broken)}`);
        changed = true;
      }
    }
  }
}
