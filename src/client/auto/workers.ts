// One advisory task on a read-only worker: admission, the smallest sufficient profile, the turn, exact
// evidence into the ArtifactStore, a bounded WorkerResult, one escalation on a weak answer and a quota
// failover to the other vendor (counted against the session's cap).
import { oneLine } from "../../shared/terminal-text.js";
import type { AutoTask } from "../session/auto-state.js";
import {
  isQuotaLimit,
  type ModelProfile,
  otherExecutor,
  type PlanTask,
  type ProfileOrigin,
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

async function attempt(
  ctx: EngineContext,
  task: PlanTask,
  first: ModelProfile,
  signal: AbortSignal,
): Promise<"done" | "failed"> {
  let profile = first;
  let origin: ProfileOrigin = "scores";
  let escalated = false;
  const started = Date.now();
  let executorMs = 0;
  setTask(ctx, task.id, { state: "running", started_at: new Date(started).toISOString() });
  const finish = (state: AutoTask["state"], reason: string | null, refs: AutoTask["refs"] = []) => {
    const ended = Date.now();
    setTask(ctx, task.id, {
      state,
      reason: reason === null ? null : oneLine(reason).slice(0, 300),
      ended_at: new Date(ended).toISOString(),
      duration_ms: ended - started,
      executor_ms: Math.round(executorMs),
      ...(refs.length ? { refs } : {}),
    });
  };
  for (;;) {
    if (signal.aborted || ctx.signal.aborted) {
      finish("cancelled", "session stopped");
      return "failed";
    }
    if (!(await admit(ctx, profile.executor))) {
      const alternate = pickOn(ctx, otherExecutor(profile.executor), profile.tier);
      if (alternate && (await admit(ctx, alternate.executor))) {
        profile = alternate;
        origin = "failover";
        setTask(ctx, task.id, { profile: profileView(profile), profile_origin: origin });
        continue;
      }
      finish(
        "primary",
        `no worker admitted (${profile.executor} has no quota headroom): the primary does it`,
      );
      return "done";
    }
    setTask(ctx, task.id, { profile: profileView(profile), profile_origin: origin });
    const executor = ctx.executors[profile.executor];
    if (!executor) {
      finish("failed", `${profile.executor} is not installed`);
      return "failed";
    }
    const dependencies = task.depends_on
      .map((id) => ctx.results.get(id))
      .filter((result): result is WorkerResult => result !== undefined);
    const outcome = await runTurn(
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
      AbortSignal.any([ctx.signal, signal]),
    );
    executorMs += outcome.durationMs;
    if (outcome.status === "completed") {
      const ref = await ctx.artifacts.put(task.id, outcome.text);
      const result = toWorkerResult(task.id, outcome.text, outcome.structured, [ref]);
      ctx.results.set(task.id, result);
      finish("done", null, [
        { ref: ref.ref, bytes: ref.bytes, sha256: ref.sha256, expires_at: ref.expires_at },
      ]);
      return "done";
    }
    if (outcome.status === "cancelled") {
      finish("cancelled", "session stopped");
      return "failed";
    }
    if (outcome.status === "limit" && outcome.limit && isQuotaLimit(outcome.limit.kind)) {
      await observeLimit(ctx, profile.executor, outcome);
      const alternate = pickOn(ctx, otherExecutor(profile.executor), profile.tier);
      if (!alternate) {
        finish("failed", `${profile.executor} hit its ${outcome.limit.kind} and no other worker fits`);
        return "failed";
      }
      try {
        await failover(ctx, `${profile.executor}: ${outcome.limit.kind}: ${outcome.limit.message}`, task.id);
      } catch (error) {
        if (!(error instanceof AutoStopped)) throw error;
        finish("failed", error.message);
        return "failed";
      }
      profile = alternate;
      origin = "failover";
      continue;
    }
    // A weak answer (failed, crashed, timed out, context full) is tried once more one tier up.
    const why = `${outcome.status}${outcome.limit ? ` (${outcome.limit.kind})` : ""}: ${outcome.error ?? "no answer"}`;
    const next = escalated
      ? undefined
      : escalate(
          profile,
          ctx.profiles.filter((candidate) => ctx.executors[candidate.executor] !== undefined),
        );
    if (!next) {
      finish("failed", why);
      return "failed";
    }
    escalated = true;
    const reason = oneLine(`${why}; ${next.reason}`).slice(0, 300);
    ctx.recorder.change((state) => {
      state.tasks.find((entry) => entry.id === task.id)?.escalations.push(reason);
    });
    profile = next.profile;
    origin = "escalated";
  }
}

/** The smallest sufficient verified profile of `executor` for `tier`, if it is installed. */
function pickOn(ctx: EngineContext, executor: ModelProfile["executor"], tier: ModelProfile["tier"]) {
  if (!ctx.executors[executor]) return undefined;
  return smallestSufficient(ctx.profiles, tier, executor);
}
