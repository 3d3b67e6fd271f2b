// What every part of one AUTO session shares while it runs: executors, quota, artifacts, the recorder, the
// knowledge router and the bounded brief. Built once by the supervisor; never persisted.

import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { TOKEN_ENV } from "../agents/inject.js";
import type { RunningRouter } from "../router/router.js";
import type { SessionUsage, TurnKind, Usage } from "../session/auto-state.js";
import { processStartTicks } from "../session/store.js";
import type { ArtifactStore } from "./artifacts.js";
import type { Recorder } from "./checkpoint.js";
import { codexTurnUsage } from "./codex-thread-usage.js";
import type {
  Executor,
  ExecutorEvent,
  ExecutorName,
  KnowledgeAccess,
  ModelProfile,
  StdioMcpServer,
  TokenUsage,
  TurnOutcome,
  TurnRequest,
  WorkerResult,
} from "./contracts.js";
import type { EventStream } from "./event-stream.js";
import type { SharedContextBrief, SourceSelection } from "./knowledge.js";
import type { QuotaManager } from "./quota/admission.js";
import type { JournalWriter } from "./resume.js";
import type { AutoSettings } from "./settings.js";

export interface EngineContext {
  sessionId: string;
  /** ivoai's private state directory (sessions, artifacts, journals, quota). */
  stateDir: string;
  task: string;
  cwd: string;
  runtimeDir: string;
  /** The caller's environment; per-turn variables are added by `turnEnv`. */
  env: NodeJS.ProcessEnv;
  executors: Partial<Record<ExecutorName, Executor>>;
  profiles: ModelProfile[];
  quota: QuotaManager;
  artifacts: ArtifactStore;
  recorder: Recorder;
  /** The session's one event stream (derived from the recorder's changes). */
  events: EventStream;
  /** The words a resume needs (brief, plan, worker results), kept privately. */
  journal: JournalWriter;
  /** This run continues an interrupted session: the journal's brief, plan and results stand. */
  resumed: boolean;
  router: RunningRouter | null;
  /** The knowledge servers chosen for the session and why the others were left out (recorded after the brief). */
  sources?: SourceSelection;
  /** The ivoai-orchestrator MCP for the primary, with the variables it needs. */
  orchestrator: { server: StdioMcpServer; env: Record<string, string> } | null;
  brief: SharedContextBrief;
  results: Map<string, WorkerResult>;
  settings: AutoSettings;
  /** The operator's explicit model: the primary runs exactly it and never fails over. */
  explicit: { executor: ExecutorName; model: string; effort: string } | null;
  /** A follow-up turn of a frontend conversation: the primary's first turn continues its conversation. */
  followUp: boolean;
  /** Receives the answering turns' text as it arrives (the frontend's stream). */
  onAnswerText?: (text: string) => void;
  /** Worker slots shared by the plan's scheduler and delegated tasks: the hard cap holds for both. */
  slots: Slots;
  /** Delegated tasks still running: the session waits for them before it records its end. */
  background: Set<Promise<unknown>>;
  /** Aborts when the session's last turn is over: delegated tasks stop with it. */
  finished: AbortSignal;
  killAfterMs: number;
  signal: AbortSignal;
  notice(message: string): void;
  /** Called with every executor event (progress output, benchmarks). */
  onEvent?: (executor: ExecutorName, event: ExecutorEvent, at: number) => void;
}

/** A fresh private directory for one turn's files (MCP config, output schema). */
export async function turnDir(ctx: EngineContext): Promise<string> {
  const dir = path.join(ctx.runtimeDir, `turn-${randomBytes(6).toString("hex")}`);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The knowledge a turn may use: workers get the router's read-only capability, the primary the full one. */
export function turnKnowledge(ctx: EngineContext): KnowledgeAccess | null {
  return ctx.router
    ? {
        endpoints: { memory: ctx.router.endpoints.memory, context: ctx.router.endpoints.context },
        tokenEnv: TOKEN_ENV,
        user: ctx.router.userEndpoints,
      }
    : null;
}

export function turnEnv(ctx: EngineContext, role: TurnRequest["role"]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...ctx.env, IVOAI_SESSION_ID: ctx.sessionId };
  // Never inherited: a worker must not reach the orchestrator or hold the full capability by accident.
  delete env.IVOAI_ORCHESTRATOR_SOCKET;
  delete env.IVOAI_ORCHESTRATOR_TOKEN;
  delete env[TOKEN_ENV];
  if (ctx.router) env[TOKEN_ENV] = role === "worker" ? ctx.router.readOnlyCapability : ctx.router.capability;
  if (role === "primary" && ctx.orchestrator) Object.assign(env, ctx.orchestrator.env);
  return env;
}

/** Runs one turn with the session's signal, timeout and event plumbing; the turn's files are removed after. */
export async function runTurn(
  ctx: EngineContext,
  executor: Executor,
  request: Omit<
    TurnRequest,
    "cwd" | "runtimeDir" | "env" | "timeoutMs" | "killAfterMs" | "signal" | "onEvent"
  >,
  /** Ends this turn early (a worker's task signal); the session's own stop always does. */
  signal: AbortSignal = ctx.signal,
  /** Receives the turn's text events (the frontend's answer stream). */
  onText: ((text: string) => void) | undefined,
  /** What the turn is for: recorded with its usage, per turn, per task and for the session. */
  label: TurnLabel,
): Promise<TurnOutcome & { startedAt: number; limitEventAt: number | null }> {
  const dir = await turnDir(ctx);
  const startedAt = performance.now();
  let limitEventAt: number | null = null;
  let pid: number | null = null;
  try {
    const outcome = await executor.runTurn({
      ...request,
      cwd: ctx.cwd,
      runtimeDir: dir,
      env: turnEnv(ctx, request.role),
      timeoutMs: ctx.settings.turn_timeout_sec * 1000,
      killAfterMs: ctx.killAfterMs,
      signal,
      onEvent: (event) => {
        if (event.type === "process") {
          pid = event.pid;
          const started = { pid: event.pid, start_ticks: processStartTicks(event.pid) };
          ctx.recorder.change((state) => {
            state.processes = [...state.processes, started].slice(-16);
          });
          return;
        }
        const at = performance.now();
        if (event.type === "quota") void ctx.quota.observe(event.snapshots).catch(() => undefined);
        if (event.type === "limit") limitEventAt ??= at;
        if (event.type === "text" && onText) onText(event.text);
        ctx.onEvent?.(executor.name, event, at);
      },
    });
    recordTurn(ctx, executor.name, label, {
      ...outcome,
      usage: await ownUsage(ctx, executor, request, outcome),
    });
    return { ...outcome, startedAt, limitEventAt };
  } finally {
    // The executor reaped its group before returning: nothing of it is left to end after a crash.
    if (pid !== null) {
      const ended = pid;
      ctx.recorder.change((state) => {
        state.processes = state.processes.filter((entry) => entry.pid !== ended);
      });
    }
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The usage the turn itself added (codex reports its thread's running total: see codex-thread-usage.ts). */
async function ownUsage(
  ctx: EngineContext,
  executor: Executor,
  request: { resumeThreadId: string | null },
  outcome: TurnOutcome,
): Promise<TokenUsage | null> {
  if (executor.name !== "codex" || !outcome.usage || !outcome.threadId) return outcome.usage;
  const resumed = request.resumeThreadId !== null && request.resumeThreadId === outcome.threadId;
  return codexTurnUsage(ctx.stateDir, outcome.threadId, resumed, outcome.usage);
}

/** What a turn is for, as its record says. */
export interface TurnLabel {
  kind: TurnKind;
  taskId: string | null;
  model: string | null;
}

const MAX_TURNS_KEPT = 64;

/** One turn's usage, on record three times: the turn itself, its task's sum and the session's sum. */
function recordTurn(
  ctx: EngineContext,
  executor: ExecutorName,
  label: TurnLabel,
  outcome: TurnOutcome,
): void {
  const usage = outcome.usage ? usageOf(outcome.usage) : null;
  ctx.recorder.change((state) => {
    state.turns.push({
      at: new Date().toISOString(),
      kind: label.kind,
      task_id: label.taskId,
      executor,
      model: label.model,
      status: outcome.status,
      duration_ms: Math.round(outcome.durationMs),
      usage,
    });
    if (state.turns.length > MAX_TURNS_KEPT) state.turns.splice(0, state.turns.length - MAX_TURNS_KEPT);
    state.usage = countTurn(state.usage, usage);
    state.usage_by_executor[executor] = countTurn(state.usage_by_executor[executor] ?? null, usage);
    if (label.taskId === null || usage === null) return;
    const task = state.tasks.find((entry) => entry.id === label.taskId);
    if (task) task.usage = addUsage(task.usage, usage);
  });
}

export function usageOf(usage: TokenUsage): Usage {
  return {
    input_tokens: Math.max(0, Math.round(usage.inputTokens)),
    cached_input_tokens: Math.max(0, Math.round(usage.cachedInputTokens)),
    output_tokens: Math.max(0, Math.round(usage.outputTokens)),
    cost_usd: usage.costUsd,
  };
}

/** A sum over turns with one more turn in it. */
function countTurn(sum: SessionUsage | null, usage: Usage | null): SessionUsage {
  const unpriced = usage !== null && usage.cost_usd === null && usage.input_tokens + usage.output_tokens > 0;
  return {
    ...addUsage(sum, usage),
    turns: (sum?.turns ?? 0) + 1,
    unpriced_turns: (sum?.unpriced_turns ?? 0) + (unpriced ? 1 : 0),
  };
}

/** a + b; a cost is known once any turn said one (null + x = x). */
export function addUsage(a: Usage | null, b: Usage | null): Usage {
  const zero: Usage = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, cost_usd: null };
  const left = a ?? zero;
  const right = b ?? zero;
  const cost =
    left.cost_usd === null && right.cost_usd === null
      ? null
      : Math.round(((left.cost_usd ?? 0) + (right.cost_usd ?? 0)) * 1e6) / 1e6;
  return {
    input_tokens: left.input_tokens + right.input_tokens,
    cached_input_tokens: left.cached_input_tokens + right.cached_input_tokens,
    output_tokens: left.output_tokens + right.output_tokens,
    cost_usd: cost,
  };
}

export interface Slots {
  acquire(signal: AbortSignal): Promise<boolean>;
  release(): void;
}

/** A counting semaphore; `acquire` resolves false when `signal` aborts first. */
export function createSlots(capacity: number): Slots {
  let used = 0;
  const waiting: (() => void)[] = [];
  return {
    async acquire(signal) {
      while (used >= capacity) {
        if (signal.aborted) return false;
        await new Promise<void>((resolve) => {
          const wake = () => {
            signal.removeEventListener("abort", wake);
            resolve();
          };
          waiting.push(wake);
          signal.addEventListener("abort", wake, { once: true });
        });
      }
      if (signal.aborted) return false;
      used++;
      return true;
    },
    release() {
      used = Math.max(0, used - 1);
      waiting.shift()?.();
    },
  };
}
