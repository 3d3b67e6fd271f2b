// The shapes AUTO's parts agree on: executors, their events and outcomes, quota snapshots, model profiles,
// plans, worker results and artifact refs. Every module under client/auto builds against this file only.
import { z } from "zod";
import type { ExecutorName, QuotaSnapshot } from "./quota/snapshot.js";

// Executor names and quota snapshots live in quota/snapshot.ts, which loads no zod: the status-line hook runs
// on every refresh of Claude's status line. They are re-exported here with the other shapes.
export {
  EXECUTORS,
  type ExecutorName,
  QUOTA_SOURCES,
  QUOTA_STATUSES,
  type QuotaSnapshot,
} from "./quota/snapshot.js";

export function otherExecutor(name: ExecutorName): ExecutorName {
  return name === "codex" ? "claude" : "codex";
}

// ---------------------------------------------------------------------------------------------------------
// Executors: one official CLI turn, as normalised events and one outcome.

/** A failure the supervisor acts on. Only usage_limit and rate_limit are quota (they trigger failover). */
export type LimitKind = "usage_limit" | "rate_limit" | "context_window" | "overloaded" | "unauthorized";

export function isQuotaLimit(kind: LimitKind): boolean {
  return kind === "usage_limit" || kind === "rate_limit";
}

export interface LimitInfo {
  kind: LimitKind;
  /** Bounded, single line, no secrets: what the CLI said. */
  message: string;
  resetsAt: string | null;
}

export interface TokenUsage {
  /** Every prompt token the turn sent, cached ones included. */
  inputTokens: number;
  /** Of inputTokens, those read from the vendor's prompt cache (0 when the CLI does not say). */
  cachedInputTokens: number;
  outputTokens: number;
  /** What the vendor says the turn cost in US dollars (claude's total_cost_usd); null when it does not say. */
  costUsd: number | null;
  /** Tokens the conversation occupies in the model's context window after this turn, when known. */
  contextTokens: number | null;
}

export type ExecutorEvent =
  | { type: "thread"; threadId: string }
  | { type: "text"; text: string }
  | { type: "tool"; name: string; status: "started" | "completed" | "failed" }
  | { type: "usage"; usage: TokenUsage }
  | { type: "quota"; snapshots: QuotaSnapshot[] }
  | { type: "limit"; limit: LimitInfo }
  /** The CLI's process (and process-group) id, once it runs. */
  | { type: "process"; pid: number };

/** Who runs the turn decides what it may touch. */
export type TurnRole = "primary" | "worker";

export interface KnowledgeAccess {
  /** The session router's loopback endpoints. */
  endpoints: { memory: string; context: string };
  /** Name of the environment variable that holds the router capability (never its value in argv). */
  tokenEnv: string;
  /** The user's own MCP servers at the router; a worker is given only the `read_only` ones. */
  user?: readonly { name: string; url: string; read_only: boolean }[];
}

export interface StdioMcpServer {
  name: string;
  command: string;
  args: string[];
  /** Names of environment variables the server needs passed through (values stay in the environment). */
  envVars: string[];
}

export interface TurnRequest {
  role: TurnRole;
  prompt: string;
  cwd: string;
  /** Private 0700 directory for per-turn files (MCP config, output schema); removed by the caller. */
  runtimeDir: string;
  env: NodeJS.ProcessEnv;
  model: string | null;
  effort: string | null;
  /** Continue this CLI conversation (codex thread id / claude session id). */
  resumeThreadId: string | null;
  knowledge: KnowledgeAccess | null;
  /** Injected for the primary's lifetime only (the ivoai-orchestrator MCP). Never for workers. */
  extraMcp: StdioMcpServer[];
  /** JSON Schema the final answer must follow (plans, worker results). */
  outputSchema: Record<string, unknown> | null;
  timeoutMs: number;
  /** Seconds between TERM and KILL of the executor's process group. */
  killAfterMs: number;
  signal?: AbortSignal;
  onEvent?: (event: ExecutorEvent) => void;
}

export type TurnStatus = "completed" | "failed" | "limit" | "cancelled" | "timeout" | "crashed";

export interface TurnOutcome {
  status: TurnStatus;
  threadId: string | null;
  /** The final answer (last agent message / result text); "" when none. */
  text: string;
  /** Parsed structured output when an outputSchema was requested and the answer parsed as JSON. */
  structured: unknown;
  limit: LimitInfo | null;
  usage: TokenUsage | null;
  exitCode: number | null;
  exitSignal: string | null;
  /** Bounded one-line reason when not completed. */
  error: string | null;
  durationMs: number;
  /** Milliseconds from spawn to the first event, for the failover benchmark. */
  firstEventMs: number | null;
}

export interface Executor {
  readonly name: ExecutorName;
  /** Absolute path of the official CLI. */
  readonly path: string;
  runTurn(request: TurnRequest): Promise<TurnOutcome>;
}

// ---------------------------------------------------------------------------------------------------------
// Quota (the snapshots themselves are in quota/snapshot.ts).

export interface Admission {
  admitted: boolean;
  /** One line, e.g. "codex primary window at 93% (headroom 10%) until 2026-11-30T08:00:00Z". */
  reason: string;
}

// ---------------------------------------------------------------------------------------------------------
// Executor registry and model catalogue.

/** 1 = light, 2 = standard, 3 = strongest. */
export type Tier = 1 | 2 | 3;

export interface ModelProfile {
  /** Opaque, stable catalogue id (e.g. "mdl_3f9a0c1b"); never parsed by callers. */
  id: string;
  executor: ExecutorName;
  model: string;
  effort: string;
  tier: Tier;
  contextWindow: number;
  /**
   * AUTO may schedule it: codex listed it in model/list (run-time verified) and is logged in, or claude is
   * installed and logged in (its aliases are ivoai's catalogue: usable, but `ivoai executors` never shows them
   * as verified).
   */
  verified: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Plans: what the planner returns (validated by ivoai) and what ivoai decides about each task.

export const MAX_PLAN_TASKS = 12;
export const DEFAULT_WORKERS = 2;
export const MAX_WORKERS = 3;
export const MAX_FAILOVERS = 2;

const unit = z.number().min(0).max(1);
export const taskSignalsSchema = z.object({
  /** How hard the reasoning is. */
  complexity: unit,
  /** How much must be read to do it. */
  context_need: unit,
  /** How bad a wrong answer is. */
  risk: unit,
  /** How unclear the task is. */
  ambiguity: unit,
  /** Expected tokens the task costs a worker (input + output). */
  est_tokens: z.number().int().min(0).max(2_000_000),
});
export type TaskSignals = z.infer<typeof taskSignalsSchema>;

export const planTaskSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "task ids are 1-32 of a-z, 0-9, _ and -"),
  kind: z.enum(["research", "analysis", "review", "change"]),
  instructions: z.string().min(1).max(4000),
  depends_on: z.array(z.string()).max(MAX_PLAN_TASKS).default([]),
  signals: taskSignalsSchema,
});
export type PlanTask = z.infer<typeof planTaskSchema>;

export const planSchema = z.object({
  tasks: z.array(planTaskSchema).min(1),
});
export type Plan = z.infer<typeof planSchema>;

export type TaskState = "pending" | "running" | "done" | "failed" | "skipped" | "primary" | "cancelled";

/** Where a task's model profile came from. */
export type ProfileOrigin = "scores" | "escalated" | "failover" | "primary";

// ---------------------------------------------------------------------------------------------------------
// WorkingContext: exact worker evidence in a private transient store; only refs travel.

export const resultRefSchema = z.object({
  ref: z.string().regex(/^art_[0-9a-f]{32}$/),
  task_id: z.string(),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  expires_at: z.string(),
});
export type ResultRef = z.infer<typeof resultRefSchema>;

export const MAX_SUMMARY_CHARS = 1_500;
export const MAX_FINDINGS = 12;
export const MAX_FINDING_CHARS = 400;

export const workerAnswerSchema = z.object({
  summary: z.string(),
  findings: z.array(z.string()).default([]),
  /** Advisory: what the worker thinks should change; only the primary applies changes. */
  state_delta: z
    .array(z.object({ path: z.string().max(300), change: z.string().max(MAX_FINDING_CHARS) }))
    .default([]),
});

/** What the primary receives about a worker's task: bounded, provider-neutral, refs instead of bodies. */
export interface WorkerResult {
  task_id: string;
  status: "done" | "failed";
  summary: string;
  findings: string[];
  state_delta: { advisory: true; changes: { path: string; change: string }[] };
  refs: ResultRef[];
}

// ---------------------------------------------------------------------------------------------------------
// The prompts' role markers: the first line of every prompt ivoai sends says what the turn is for.

export const ROLE_MARKERS = {
  answer: "[ivoai:answer]",
  plan: "[ivoai:plan]",
  repair: "[ivoai:plan-repair]",
  worker: "[ivoai:worker]",
  consolidate: "[ivoai:consolidate]",
  handoff: "[ivoai:handoff]",
} as const;
