// The primary conversation: one logical owner of the session that may move between vendors. A confirmed
// quota limit ends the turn (the executor reaps its process group), the alternate is re-probed and, when
// admitted, continues with a bounded handoff; at most MAX_FAILOVERS times per session.
import { oneLine } from "../../shared/terminal-text.js";
import type { TurnKind } from "../session/auto-state.js";
import {
  type ExecutorName,
  isQuotaLimit,
  MAX_FAILOVERS,
  otherExecutor,
  type TurnOutcome,
  type TurnRole,
} from "./contracts.js";
import { type EngineContext, runTurn, turnKnowledge } from "./engine-context.js";
import { handoffPrompt } from "./plan.js";
import { contextPressure } from "./quota/admission.js";

/** The session cannot go on: quota on both sides, too many failovers, or an executor that failed. */
export class AutoStopped extends Error {
  constructor(
    message: string,
    readonly reason: "quota" | "failed" | "cancelled",
  ) {
    super(message);
  }
}

export interface PrimaryTurn {
  /** What the turn is for (recorded with its usage). */
  kind: TurnKind;
  prompt: string;
  role: TurnRole;
  outputSchema: Record<string, unknown> | null;
  /** Continue the primary's conversation (false for a turn that must start clean). */
  resume: boolean;
  /** The turn answers the user: its text goes to ctx.onAnswerText as it arrives. */
  streams?: boolean;
  /** false: no knowledge servers for this turn (the RAG answer already has its brief). Default true. */
  knowledge?: boolean;
  /** What a new conversation gets after a failover when the turn itself leans on its conversation (repair). */
  handoffTurn?: string;
}

const admitLine = (ctx: EngineContext, executor: ExecutorName, admitted: boolean, reason: string) =>
  ctx.recorder.change((state) => {
    state.admissions.push({
      at: new Date().toISOString(),
      executor,
      admitted,
      reason: oneLine(reason).slice(0, 300),
    });
    if (state.admissions.length > 40) state.admissions.splice(0, state.admissions.length - 40);
  });

/** Admission of `executor` against the quota headroom, recorded either way. */
export async function admit(ctx: EngineContext, executor: ExecutorName): Promise<boolean> {
  if (!ctx.executors[executor]) return false;
  const admission = await ctx.quota.admit(executor);
  admitLine(ctx, executor, admission.admitted, admission.reason);
  return admission.admitted;
}

/** Records a quota limit the turn hit, so admission refuses the executor until the window resets. */
export async function observeLimit(
  ctx: EngineContext,
  executor: ExecutorName,
  outcome: TurnOutcome,
): Promise<void> {
  const resetsAt = outcome.limit?.resetsAt ?? new Date(Date.now() + 5 * 60_000).toISOString();
  await ctx.quota
    .observe([
      {
        executor,
        window: "turn",
        used_percent: 100,
        status: "rejected",
        resets_at: resetsAt,
        observed_at: new Date().toISOString(),
        source: "turn-error",
      },
    ])
    .catch(() => undefined);
}

/** Re-probes the alternate's quota (codex: app-server) and asks admission. */
export async function probeAlternate(ctx: EngineContext, alternate: ExecutorName): Promise<boolean> {
  const executor = ctx.executors[alternate];
  if (!executor || ctx.signal.aborted) return false;
  await ctx.quota.refresh(alternate, executor.path, ctx.env).catch(() => undefined);
  return admit(ctx, alternate);
}

/** Runs one primary turn, failing over to the other vendor on a confirmed quota limit. */
export async function primaryTurn(ctx: EngineContext, turn: PrimaryTurn): Promise<TurnOutcome> {
  let prompt = turn.prompt;
  let resume = turn.resume;
  let freshThreadTried = false;
  let limitAt: number | null = null;
  let pendingFailover: number | null = null;
  // Whether this turn's answer already reached the person (a failover then needs a visible marker).
  let streamed = false;
  const onText =
    turn.streams && ctx.onAnswerText
      ? (text: string) => {
          streamed = true;
          ctx.onAnswerText?.(text);
        }
      : undefined;
  const handoffTurn = turn.handoffTurn ?? turn.prompt;
  if (!(await admit(ctx, ctx.recorder.state.primary))) {
    await failover(ctx, "not admitted: quota headroom", null, { limitKind: "admission" });
    ({ prompt, resume } = handoff(ctx, handoffTurn, "the previous executor had no quota headroom"));
  }
  for (;;) {
    const name = ctx.recorder.state.primary;
    const executor = ctx.executors[name];
    if (!executor) throw new AutoStopped(`${name} is not installed`, "failed");
    const thread = resume ? ctx.recorder.state.threads[name] : null;
    const explicit = ctx.explicit?.executor === name ? ctx.explicit : null;
    const outcome = await runTurn(
      ctx,
      executor,
      {
        role: turn.role,
        prompt,
        model: explicit?.model ?? null,
        effort: explicit?.effort ?? null,
        resumeThreadId: thread,
        knowledge: turn.knowledge === false ? null : turnKnowledge(ctx),
        extraMcp: turn.role === "primary" && ctx.orchestrator ? [ctx.orchestrator.server] : [],
        outputSchema: turn.outputSchema,
      },
      ctx.signal,
      onText,
      { kind: turn.kind, taskId: null, model: explicit?.model ?? null },
    );
    if (pendingFailover !== null && limitAt !== null && outcome.firstEventMs !== null) {
      const handoffMs = Math.max(0, Math.round(outcome.startedAt + outcome.firstEventMs - limitAt));
      const index = pendingFailover;
      ctx.recorder.change((state) => {
        const entry = state.failovers[index];
        if (entry) entry.handoff_ms = handoffMs;
      });
      pendingFailover = null;
    }
    trackThreadAndPressure(ctx, name, outcome);
    if (outcome.status === "completed") return outcome;
    if (outcome.status === "cancelled") throw new AutoStopped("stopped", "cancelled");
    if (outcome.status === "limit" && outcome.limit && isQuotaLimit(outcome.limit.kind)) {
      limitAt = outcome.limitEventAt ?? performance.now();
      await observeLimit(ctx, name, outcome);
      pendingFailover = await failover(
        ctx,
        `${name}: ${outcome.limit.kind}: ${outcome.limit.message}`,
        null,
        {
          limitKind: outcome.limit.kind,
          resetsAt: outcome.limit.resetsAt,
        },
      );
      if (turn.streams && streamed) {
        // The person reading the answer sees where one vendor stopped and the other took over.
        ctx.onAnswerText?.(failoverMarker(name, ctx.recorder.state.primary, outcome.limit.kind));
      }
      ({ prompt, resume } = handoff(
        ctx,
        handoffTurn,
        `${name} hit its ${outcome.limit.kind.replace("_", " ")}`,
      ));
      continue;
    }
    if (outcome.status === "limit" && outcome.limit?.kind === "context_window" && !freshThreadTried) {
      // Context pressure is not quota: same vendor, a fresh conversation with a bounded handoff.
      freshThreadTried = true;
      ctx.recorder.change((state) => {
        state.context_pressure[name] = { ratio: 1, level: "full" };
        state.threads[name] = null;
      });
      ctx.notice(`ivoai auto: ${name}'s context window is full; continuing in a fresh conversation`);
      ({ prompt, resume } = handoff(
        ctx,
        handoffTurn,
        `the previous conversation filled ${name}'s context window`,
      ));
      continue;
    }
    throw new AutoStopped(
      `${name} ${outcome.status === "limit" ? `stopped (${outcome.limit?.kind})` : outcome.status}: ${outcome.error ?? "no answer"}`,
      "failed",
    );
  }
}

/** Failovers reserved so far and the vendor the last one left, per session (reserved before any await). */
const gates = new WeakMap<EngineContext, { reserved: number; lastFrom: ExecutorName | null }>();

/**
 * Moves the primary (taskId null) or a worker task to the other vendor after re-probing it. Returns the new
 * failover's index in the record, or null when it joined the previous one: several workers and the primary
 * share one account, so the same vendor's limit seen again is one failover, not one each. The slot is
 * reserved before the probe, so concurrent limits can never pass the cap. Throws AutoStopped at the cap or
 * when the alternate is not admitted.
 */
/** What moved the work, for the failover record. */
export interface FailoverDetail {
  /** usage_limit, rate_limit, or "admission" when headroom refused the executor before its turn. */
  limitKind: string;
  resetsAt?: string | null;
  /** The model the task moves to (a worker's); the primary keeps its CLI's default. */
  toModel?: string | null;
}

export async function failover(
  ctx: EngineContext,
  reason: string,
  taskId: string | null,
  detail: FailoverDetail,
): Promise<number | null> {
  const state = ctx.recorder.state;
  const from =
    taskId === null
      ? state.primary
      : (state.tasks.find((t) => t.id === taskId)?.profile?.executor ?? state.primary);
  const to = otherExecutor(from);
  if (ctx.explicit) {
    throw new AutoStopped(
      `${ctx.explicit.executor} · ${ctx.explicit.model} was chosen explicitly and cannot continue (${oneLine(reason).slice(0, 160)}); an explicit model never falls back — choose "ivoai auto" to let ivoai fail over`,
      "quota",
    );
  }
  // A resumed run has its own budget: the failovers before the last resume moved an earlier run.
  const since = state.resumes.at(-1)?.at;
  const mine = since ? state.failovers.filter((entry) => entry.at >= since) : state.failovers;
  const gate = gates.get(ctx) ?? { reserved: mine.length, lastFrom: mine.at(-1)?.from ?? null };
  gates.set(ctx, gate);
  const joins = gate.lastFrom === from;
  if (!joins) {
    if (gate.reserved >= MAX_FAILOVERS) {
      throw new AutoStopped(
        `stopped after ${MAX_FAILOVERS} failovers: ${oneLine(reason).slice(0, 200)}`,
        "quota",
      );
    }
    gate.reserved++;
    gate.lastFrom = from;
  }
  if (ctx.signal.aborted) throw new AutoStopped("stopped", "cancelled");
  if (!(await probeAlternate(ctx, to))) {
    throw new AutoStopped(
      `no executor can continue: ${oneLine(reason).slice(0, 160)}; ${to} is not available or has no quota headroom`,
      "quota",
    );
  }
  if (joins) {
    ctx.recorder.change((draft) => {
      if (taskId === null) draft.primary = to;
      const last = draft.failovers.at(-1);
      const who = taskId ?? "primary";
      if (last && last.task_id !== taskId && !last.joined.includes(who) && last.joined.length < 12)
        last.joined.push(who);
    });
    ctx.notice(
      `ivoai auto: ${taskId ? `task ${taskId}` : "the primary"} also moves ${from} → ${to} (same limit)`,
    );
    return null;
  }
  const index = state.failovers.length;
  ctx.recorder.change((draft) => {
    draft.failovers.push({
      at: new Date().toISOString(),
      scope: taskId === null ? "primary" : "task",
      task_id: taskId,
      from,
      to,
      reason: oneLine(reason).slice(0, 300),
      handoff_ms: null,
      limit_kind: detail.limitKind.slice(0, 20),
      resets_at: detail.resetsAt ?? null,
      to_model: detail.toModel ?? null,
      joined: [],
    });
    if (taskId === null) draft.primary = to;
  });
  ctx.notice(
    `ivoai auto: failover ${gate.reserved}/${MAX_FAILOVERS}: ${from} → ${to}${taskId ? ` for task ${taskId}` : ""} (${oneLine(reason).slice(0, 160)})`,
  );
  return index;
}

/** The line a streamed answer carries where one vendor stopped and the other continues. */
export function failoverMarker(from: ExecutorName, to: ExecutorName, kind: string): string {
  return `\n\n— ivoai: ${from} hit its ${kind.replace("_", " ")}; ${to} continues from here —\n\n`;
}

/** The same turn for the new owner, started clean (bounded: the original turn plus the results so far). */
function handoff(ctx: EngineContext, original: string, why: string): { prompt: string; resume: boolean } {
  return {
    prompt: handoffPrompt({ turn: original, results: [...ctx.results.values()], reason: why }),
    resume: false,
  };
}

function trackThreadAndPressure(ctx: EngineContext, name: ExecutorName, outcome: TurnOutcome): void {
  const window = ctx.profiles.find((profile) => profile.executor === name)?.contextWindow ?? 0;
  const pressure = contextPressure(outcome.usage, window);
  ctx.recorder.change((state) => {
    if (outcome.threadId) state.threads[name] = outcome.threadId;
    if (pressure.known) {
      state.context_pressure[name] = {
        ratio: Math.round(pressure.ratio * 1000) / 1000,
        level: pressure.level,
      };
    }
  });
}
