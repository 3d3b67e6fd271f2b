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

/**
 * Runs the DAG until nothing more can run. Tasks blocked forever (unknown dependency, cycle: an unvalidated
 * plan) end "skipped". After an abort, running tasks get the signal; a running task that then fails ends
 * "cancelled", pending ones are "cancelled" at once. A throw from onChange is re-thrown once all tasks ended.
 */
export function runDag(tasks: readonly PlanTask[], options: RunDagOptions): Promise<DagResult> {
  const started = performance.now();
  const cap = clampConcurrency(options.concurrency);
  const states = new Map<string, TaskState>();
  for (const task of tasks) {
    if (states.has(task.id)) throw new IvoaiError("INTERNAL", `duplicate task id in plan: ${task.id}`);
    states.set(task.id, "pending");
  }
  const controller = new AbortController();
  let overheadMs = 0;
  let running = 0;
  let maxConcurrent = 0;
  let callbackError: unknown;
  let finish: (result: DagResult) => void = () => {};
  let fail: (error: unknown) => void = () => {};
  const result = new Promise<DagResult>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });

  const set = (
    id: string,
    state: TaskState,
    reason: string | null = null,
    durationMs: number | null = null,
  ) => {
    states.set(id, state);
    try {
      options.onChange?.(id, state, { reason, durationMs });
    } catch (error) {
      callbackError ??= error;
    }
  };

  /** Every entry into the scheduler: timed as overhead, then starts what can start, then maybe finishes. */
  const step = (work: () => void) => {
    const began = performance.now();
    work();
    const finished = pump();
    overheadMs += performance.now() - began;
    if (!finished) return;
    options.signal?.removeEventListener("abort", onAbort);
    const wallMs = performance.now() - started;
    if (callbackError !== undefined) fail(callbackError);
    else finish({ states, overheadMs: Math.max(0, overheadMs), wallMs, maxConcurrent });
  };

  const onAbort = () => step(() => controller.abort(options.signal?.reason));

  const settle = (task: PlanTask, outcome: "done" | "failed" | Error, taskStarted: number) =>
    step(() => {
      running -= 1;
      const durationMs = Math.round(performance.now() - taskStarted);
      if (outcome === "done") set(task.id, "done", null, durationMs);
      else {
        const reason =
          outcome === "failed"
            ? "the task failed"
            : `the task threw: ${oneLine(outcome.message.slice(0, 200))}`;
        set(task.id, controller.signal.aborted ? "cancelled" : "failed", reason, durationMs);
      }
    });

  const start = (task: PlanTask) => {
    running += 1;
    maxConcurrent = Math.max(maxConcurrent, running);
    set(task.id, "running");
    const taskStarted = performance.now();
    let pending: Promise<"done" | "failed">;
    try {
      pending = options.runTask(task, controller.signal);
    } catch (error) {
      pending = Promise.reject(error);
    }
    // The synchronous part of runTask is executor time, not scheduler overhead.
    overheadMs -= performance.now() - taskStarted;
    pending.then(
      (outcome) => settle(task, outcome === "done" ? "done" : "failed", taskStarted),
      (error: unknown) =>
        settle(task, error instanceof Error ? error : new Error(String(error)), taskStarted),
    );
  };

  /** Starts what can start; true when nothing runs and nothing more can. */
  const pump = (): boolean => {
    if (controller.signal.aborted) {
      for (const task of tasks) {
        if (states.get(task.id) === "pending") set(task.id, "cancelled", "the session was aborted");
      }
    }
    // Failures propagate first, transitively, in plan order (a fixed point: plans are small).
    for (let changed = true; changed; ) {
      changed = false;
      for (const task of tasks) {
        if (states.get(task.id) !== "pending") continue;
        const broken = task.depends_on.find((id) => BROKEN.has(states.get(id) ?? "pending"));
        if (broken !== undefined) {
          set(task.id, "skipped", `dependency ${broken} ${states.get(broken)}`);
          changed = true;
        }
      }
    }
    for (const task of tasks) {
      if (running >= cap) break;
      if (states.get(task.id) !== "pending") continue;
      if (task.depends_on.every((id) => SATISFIED.has(states.get(id) ?? "pending"))) start(task);
    }
    if (running > 0) return false;
    for (const task of tasks) {
      if (states.get(task.id) === "pending") set(task.id, "skipped", "blocked: unknown dependency or cycle");
    }
    return true;
  };

  step(() => {
    for (const task of tasks) if (options.isPrimaryTask(task)) set(task.id, "primary");
    if (options.signal?.aborted) controller.abort(options.signal.reason);
    else options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  return result;
}
