// One advisory task on a read-only worker: admission, the smallest sufficient profile, the turn, exact
// evidence into the ArtifactStore, a bounded WorkerResult, one escalation on a weak answer and a quota
// failover to the other vendor (counted against the session's cap).
import { oneLine } from "../../shared/terminal-text.js";
import type { AutoTask } from "../session/auto-state.js";
import {
  type Executor,
  isQuotaLimit,
  type ModelProfile,
  otherExecutor,
  type PlanTask,
  type ProfileOrigin,
  type TurnOutcome,
  type WorkerResult,
} from "./contracts.js";
import { type EngineContext, runTurn, turnKnowledge } from "./engine-context.js";
import { toWorkerResult, workerAnswerJsonSchema, workerPrompt } from "./plan.js";
import { AutoStopped, admit, failover, observeLimit } from "./primary.js";
import { smallestSufficient } from "./registry.js";
import { escalate } from "./scoring.js";

export function setTask(ctx: EngineContext, id: string, patch: Partial<AutoTask>): void {
  ctx.recorder.change((state) => {
    const task = state.tasks.find((entry) => entry.id === id);
    if (task) Object.assign(task, patch);
  });
}

const profileView = (profile: ModelProfile) => ({
  id: profile.id,
  executor: profile.executor,
  model: profile.model,
  effort: profile.effort,
});

/** Runs `task` on workers until it is done, failed, or handed to the primary; never throws. */
export async function runWorkerTask(
  ctx: EngineContext,
  task: PlanTask,
  first: ModelProfile,
  signal: AbortSignal,
): Promise<"done" | "failed"> {
  if (!(await ctx.slots.acquire(signal))) {
    setTask(ctx, task.id, { state: "cancelled", reason: "session stopped" });
    return "failed";
  }
  try {
    return await attempt(ctx, task, first, signal);
  } catch (error) {
    // A store that is full, a disk error: the task fails on record, the session goes on.
    setTask(ctx, task.id, {
      state: "failed",
      reason: oneLine(`ivoai could not finish the task: ${(error as Error).message}`).slice(0, 300),
      ended_at: new Date().toISOString(),
    });
    return "failed";
  } finally {
    ctx.slots.release();
  }
}

/** One task's attempts on workers: the profile tried now, how it was chosen, and the task's timings. */
interface WorkerAttempt {
  readonly ctx: EngineContext;
  readonly task: PlanTask;
  readonly signal: AbortSignal;
  profile: ModelProfile;
  origin: ProfileOrigin;
  /** Escalated once already: a second weak answer fails the task. */
  escalated: boolean;
  readonly started: number;
  executorMs: number;
}

/** What one attempt decided: the task's outcome for the scheduler, or another attempt with a new profile. */
type AttemptStep = "done" | "failed" | "retry";

async function attempt(
  ctx: EngineContext,
  task: PlanTask,
  first: ModelProfile,
  signal: AbortSignal,
): Promise<"done" | "failed"> {
  const run: WorkerAttempt = {
    ctx,
    task,
    signal,
    profile: first,
    origin: "scores",
    escalated: false,
    started: Date.now(),
    executorMs: 0,
  };
  setTask(ctx, task.id, { state: "running", started_at: new Date(run.started).toISOString() });
  for (;;) {
    const step = await attemptOnce(run);
    if (step !== "retry") return step;
  }
}

/** Admission, the turn, then what its outcome means: evidence kept, a failover, an escalation or a failure. */
async function attemptOnce(run: WorkerAttempt): Promise<AttemptStep> {
  const { ctx, task } = run;
  if (run.signal.aborted || ctx.signal.aborted) {
    finishTask(run, "cancelled", "session stopped");
    return "failed";
  }
  const admission = await admitWorker(run);
  if (admission === "switched") return "retry";
  if (admission === "primary") return "done";
  setTask(ctx, task.id, { profile: profileView(run.profile), profile_origin: run.origin });
  const executor = ctx.executors[run.profile.executor];
  if (!executor) {
    finishTask(run, "failed", `${run.profile.executor} is not installed`);
    return "failed";
  }
  const outcome = await workerTurn(run, executor);
  run.executorMs += outcome.durationMs;
  if (outcome.status === "completed") return keepAnswer(run, outcome);
  if (outcome.status === "cancelled") {
    finishTask(run, "cancelled", "session stopped");
    return "failed";
  }
  if (outcome.status === "limit" && outcome.limit && isQuotaLimit(outcome.limit.kind)) {
    return failoverWorker(run, outcome, outcome.limit);
  }
  return escalateWeakAnswer(run, outcome);
}

function finishTask(
  run: WorkerAttempt,
  state: AutoTask["state"],
  reason: string | null,
  refs: AutoTask["refs"] = [],
): void {
  const ended = Date.now();
  setTask(run.ctx, run.task.id, {
    state,
    reason: reason === null ? null : oneLine(reason).slice(0, 300),
    ended_at: new Date(ended).toISOString(),
    duration_ms: ended - run.started,
    executor_ms: Math.round(run.executorMs),
    ...(refs.length ? { refs } : {}),
  });
}

/**
 * Quota admission for the current profile; without headroom the other vendor's smallest sufficient profile is
 * tried next ("switched"), and without that either the task goes to the primary ("primary").
 */
async function admitWorker(run: WorkerAttempt): Promise<"admitted" | "switched" | "primary"> {
  const { ctx, profile } = run;
  if (await admit(ctx, profile.executor)) return "admitted";
  const alternate = pickOn(ctx, otherExecutor(profile.executor), profile.tier);
  if (alternate && (await admit(ctx, alternate.executor))) {
    run.profile = alternate;
    run.origin = "failover";
    setTask(ctx, run.task.id, { profile: profileView(alternate), profile_origin: run.origin });
    return "switched";
  }
  finishTask(
    run,
    "primary",
    `no worker admitted (${profile.executor} has no quota headroom): the primary does it`,
  );
  return "primary";
}

function workerTurn(run: WorkerAttempt, executor: Executor): Promise<TurnOutcome> {
  const { ctx, task, profile } = run;
  const dependencies = task.depends_on
    .map((id) => ctx.results.get(id))
    .filter((result): result is WorkerResult => result !== undefined);
  return runTurn(
    ctx,
    executor,
    {
      role: "worker",
      prompt: workerPrompt({ task, brief: ctx.brief.text, dependencyResults: dependencies }),
      model: profile.model,
      effort: profile.effort,
      resumeThreadId: null,
      knowledge: turnKnowledge(ctx),
      extraMcp: [],
      outputSchema: workerAnswerJsonSchema,
    },
    AbortSignal.any([ctx.signal, run.signal]),
    undefined,
    { kind: "worker", taskId: task.id, model: profile.model },
  );
}

/** The exact answer goes to the ArtifactStore; the bounded result and its ref go on record. */
async function keepAnswer(run: WorkerAttempt, outcome: TurnOutcome): Promise<AttemptStep> {
  const { ctx, task } = run;
  const ref = await ctx.artifacts.put(task.id, outcome.text);
  const result = toWorkerResult(task.id, outcome.text, outcome.structured, [ref]);
  ctx.results.set(task.id, result);
  ctx.journal.save((journal) => {
    journal.results = [...journal.results.filter((entry) => entry.task_id !== task.id), result];
  });
  finishTask(run, "done", null, [
    { ref: ref.ref, bytes: ref.bytes, sha256: ref.sha256, expires_at: ref.expires_at },
  ]);
  return "done";
}

/** A quota limit: recorded, then the task moves to the other vendor (a failover counted against the cap). */
async function failoverWorker(
  run: WorkerAttempt,
  outcome: TurnOutcome,
  limit: NonNullable<TurnOutcome["limit"]>,
): Promise<AttemptStep> {
  const { ctx, task, profile } = run;
  await observeLimit(ctx, profile.executor, outcome);
  const alternate = pickOn(ctx, otherExecutor(profile.executor), profile.tier);
  if (!alternate) {
    finishTask(run, "failed", `${profile.executor} hit its ${limit.kind} and no other worker fits`);
    return "failed";
  }
  try {
    await failover(ctx, `${profile.executor}: ${limit.kind}: ${limit.message}`, task.id, {
      limitKind: limit.kind,
      resetsAt: limit.resetsAt,
      toModel: alternate.model,
    });
  } catch (error) {
    if (!(error instanceof AutoStopped)) throw error;
    finishTask(run, "failed", error.message);
    return "failed";
  }
  run.profile = alternate;
  run.origin = "failover";
  return "retry";
}

/** A weak answer (failed, crashed, timed out, context full) is tried once more one tier up. */
function escalateWeakAnswer(run: WorkerAttempt, outcome: TurnOutcome): AttemptStep {
  const { ctx, task } = run;
  const why = `${outcome.status}${outcome.limit ? ` (${outcome.limit.kind})` : ""}: ${outcome.error ?? "no answer"}`;
  const next = run.escalated
    ? undefined
    : escalate(
        run.profile,
        ctx.profiles.filter((candidate) => ctx.executors[candidate.executor] !== undefined),
      );
  if (!next) {
    finishTask(run, "failed", why);
    return "failed";
  }
  run.escalated = true;
  const reason = oneLine(`${why}; ${next.reason}`).slice(0, 300);
  ctx.recorder.change((state) => {
    state.tasks.find((entry) => entry.id === task.id)?.escalations.push(reason);
  });
  run.profile = next.profile;
  run.origin = "escalated";
  return "retry";
}

/** The smallest sufficient verified profile of `executor` for `tier`, if it is installed. */
function pickOn(ctx: EngineContext, executor: ModelProfile["executor"], tier: ModelProfile["tier"]) {
  if (!ctx.executors[executor]) return undefined;
  return smallestSufficient(ctx.profiles, tier, executor);
}
