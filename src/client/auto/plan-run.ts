// The planned path: the primary's planning turn (one repair at most), ivoai's own delegation decisions,
// read-only workers on the DAG, then the primary's consolidation turn that applies changes.
import { oneLine } from "../../shared/terminal-text.js";
import type { AutoTask } from "../session/auto-state.js";
import { MAX_PLAN_TASKS, type Plan, type PlanTask } from "./contracts.js";
import type { EngineContext } from "./engine-context.js";
import { consolidationPrompt, parsePlan, planJsonSchema, planningPrompt, repairPrompt } from "./plan.js";
import { AutoStopped, admit, primaryTurn } from "./primary.js";
import { runDag } from "./scheduler.js";
import { capabilityScore, decideDelegation, requiredTier } from "./scoring.js";
import { runWorkerTask } from "./workers.js";

/** The planned path; `resumed` is the journal's plan of an interrupted session (done tasks stay done). */
export async function runPlan(ctx: EngineContext, resumed?: Plan): Promise<string> {
  let plan: Plan;
  if (resumed) plan = resumed;
  else {
    ctx.recorder.change((state) => {
      state.phase = "planning";
    });
    plan = await obtainPlan(ctx);
    const planned = plan;
    ctx.journal.save((journal) => {
      journal.plan = planned;
    });
  }
  const done = new Set(resumed ? [...ctx.results.keys()] : []);
  const decisions = decideAll(ctx, plan.tasks);
  ctx.recorder.change((state) => {
    const before = new Map(state.tasks.map((task) => [task.id, task]));
    // Tasks the primary delegated while planning stay on record beside the plan's; a resumed plan's done
    // tasks keep their record, the others are decided (and admitted) again, keeping what they already cost.
    state.tasks = [
      ...state.tasks.filter((task) => task.origin === "delegated"),
      ...plan.tasks.map((task) => {
        const kept = before.get(task.id);
        // The journal may hold a result whose "done" the killed run had not yet checkpointed: done it is.
        if (kept && done.has(task.id))
          return kept.state === "done" ? kept : { ...kept, state: "done" as const, reason: null };
        const fresh = taskRecord(task, "plan", decisions.get(task.id) as Decision);
        return kept ? { ...fresh, usage: kept.usage, escalations: kept.escalations } : fresh;
      }),
    ];
    state.phase = "running";
  });
  const delegated = plan.tasks.filter(
    (task) => !done.has(task.id) && decisions.get(task.id)?.run === "worker",
  ).length;
  ctx.notice(
    `ivoai auto: plan of ${plan.tasks.length} task(s): ${delegated} on workers (at most ${ctx.recorder.state.workers} at once), ${plan.tasks.length - delegated} in the primary`,
  );
  const run = await runDag(plan.tasks, {
    concurrency: ctx.recorder.state.workers,
    isDone: (task) => done.has(task.id),
    isPrimaryTask: (task) => decisions.get(task.id)?.run !== "worker",
    runTask: (task, signal) => {
      const decision = decisions.get(task.id);
      if (decision?.run !== "worker") return Promise.resolve("done" as const);
      return runWorkerTask(ctx, task, decision.profile, signal);
    },
    onChange: (id, state) => {
      // Worker tasks record their own richer transitions; the scheduler's own verdicts land here.
      if (state === "skipped" || state === "cancelled" || state === "failed") {
        ctx.recorder.change((draft) => {
          const entry = draft.tasks.find((task) => task.id === id && task.origin === "plan");
          if (entry && (entry.state === "pending" || entry.state === "running")) {
            entry.state = state;
            entry.reason =
              state === "skipped"
                ? "a dependency failed"
                : state === "cancelled"
                  ? "session stopped"
                  : "failed";
          }
        });
      }
    },
    signal: ctx.signal,
  });
  ctx.recorder.change((state) => {
    state.scheduling_overhead_ms = Math.round(run.overheadMs * 100) / 100;
  });
  if (ctx.signal.aborted) throw new AutoStopped("stopped", "cancelled");

  ctx.recorder.change((state) => {
    state.phase = "consolidating";
  });
  const primaryTasks = plan.tasks.filter((task) => {
    const state = ctx.recorder.state.tasks.find((entry) => entry.id === task.id)?.state;
    return state === "primary" || state === "failed" || state === "skipped";
  });
  const outcome = await primaryTurn(ctx, {
    kind: "consolidate",
    role: "primary",
    prompt: consolidationPrompt({ task: ctx.task, results: [...ctx.results.values()], primaryTasks }),
    outputSchema: null,
    resume: true,
    streams: true,
  });
  return outcome.text;
}

async function obtainPlan(ctx: EngineContext): Promise<Plan> {
  const planning = planningPrompt({
    task: ctx.task,
    brief: ctx.brief.text,
    knowledgeNote: `memory ${ctx.brief.memory}, context ${ctx.brief.context}`,
    maxTasks: MAX_PLAN_TASKS,
  });
  const first = await primaryTurn(ctx, {
    kind: "plan",
    role: "primary",
    prompt: planning,
    outputSchema: planJsonSchema,
    // A follow-up turn continues the frontend conversation, a resumed session its own; a first turn starts one.
    resume: ctx.followUp || ctx.resumed,
  });
  let parsed = parsePlan(first.structured ?? first.text);
  let attempts = 1;
  if (!parsed.ok) {
    ctx.notice(
      `ivoai auto: the plan was invalid (${oneLine(parsed.errors[0] ?? "")}); asking once for a repair`,
    );
    attempts = 2;
    const repaired = await primaryTurn(ctx, {
      kind: "repair",
      role: "primary",
      prompt: repairPrompt(parsed.errors),
      outputSchema: planJsonSchema,
      resume: true,
      // A new vendor has no earlier plan to repair: it plans from the start.
      handoffTurn: planning,
    });
    parsed = parsePlan(repaired.structured ?? repaired.text);
  }
  const tries = attempts;
  if (!parsed.ok) {
    const errors = parsed.errors;
    ctx.recorder.change((state) => {
      state.plan = { attempts: tries, repaired: false, tasks: 0 };
    });
    throw new AutoStopped(
      `the planner's plan was invalid after one repair: ${errors.slice(0, 3).join("; ")}`,
      "failed",
    );
  }
  const plan = parsed.plan;
  ctx.recorder.change((state) => {
    state.plan = { attempts: tries, repaired: tries > 1, tasks: plan.tasks.length };
  });
  return plan;
}

export type Decision = ReturnType<typeof decideDelegation>;

/**
 * Every task's decision, decided per task:
 * 1. each task on its own merits (kind, size, score, admitted profiles);
 * 2. a task too small to be worth a worker on its own still goes to one when a task that would run on a worker
 *    builds on it: kept in the primary, it would hold its large dependents there too (the primary's work comes
 *    after the workers'), so the small cost buys their parallel run;
 * 3. a task that depends on work only the primary does (a change, or something handed back to it) is the
 *    primary's too, since workers run before the primary's turn and would see nothing of it.
 */
export function decideAll(ctx: EngineContext, tasks: readonly PlanTask[]): Map<string, Decision> {
  const own = new Map(tasks.map((task) => [task.id, decide(ctx, task)]));
  for (const task of tasks) {
    const decision = own.get(task.id);
    if (decision?.run !== "primary" || !uneconomic(ctx, task)) continue;
    const builders = tasks.filter(
      (other) => other.depends_on.includes(task.id) && own.get(other.id)?.run === "worker",
    );
    if (builders.length === 0) continue;
    const onWorker = decide(ctx, task, 0);
    if (onWorker.run !== "worker") continue;
    own.set(task.id, {
      ...onWorker,
      reason: `est. ${task.signals.est_tokens} tokens is small, but ${builders.map((other) => other.id).join(", ")} build on it on workers: ${onWorker.reason}`,
    });
  }
  const decisions = new Map<string, Decision>();
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const visit = (task: PlanTask): Decision => {
    const known = decisions.get(task.id);
    if (known) return known;
    const after = task.depends_on.flatMap((id) => {
      const dependency = byId.get(id);
      return dependency && visit(dependency).run === "primary" ? [id] : [];
    });
    const decision: Decision = after.length
      ? { run: "primary", reason: `depends on ${after.join(", ")}, which the primary does` }
      : (own.get(task.id) as Decision);
    decisions.set(task.id, decision);
    return decision;
  };
  for (const task of tasks) visit(task);
  return decisions;
}

/** Below the worker minimum and not a change: the only reason it would stay in the primary is its size. */
function uneconomic(ctx: EngineContext, task: PlanTask): boolean {
  return task.kind !== "change" && task.signals.est_tokens < ctx.settings.min_worker_tokens;
}

export function decide(
  ctx: EngineContext,
  task: PlanTask,
  minWorkerTokens = ctx.settings.min_worker_tokens,
): Decision {
  return decideDelegation(task, {
    primaryExecutor: ctx.recorder.state.primary,
    profiles: ctx.profiles.filter((profile) => ctx.executors[profile.executor] !== undefined),
    admitted: () => true,
    minWorkerTokens,
  });
}

export function taskRecord(task: PlanTask, origin: AutoTask["origin"], decision: Decision): AutoTask {
  const worker = decision.run === "worker" ? decision : undefined;
  return {
    id: task.id,
    kind: task.kind,
    origin,
    depends_on: task.depends_on,
    signals: task.signals,
    score: worker ? worker.score : capabilityScore(task.signals),
    tier: worker ? worker.tier : requiredTier(capabilityScore(task.signals)),
    profile: worker
      ? {
          id: worker.profile.id,
          executor: worker.profile.executor,
          model: worker.profile.model,
          effort: worker.profile.effort,
        }
      : null,
    profile_origin: worker ? "scores" : "primary",
    state: worker ? "pending" : "primary",
    reason: oneLine(decision.reason).slice(0, 300),
    started_at: null,
    ended_at: null,
    duration_ms: null,
    executor_ms: null,
    escalations: [],
    refs: [],
    usage: null,
  };
}

export { admit };
