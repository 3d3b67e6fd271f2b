// What an orchestrated (AUTO) session records about itself: the route, the plan's task metadata, profiles,
// states, durations, escalations, failovers and quota admissions. Only ids, numbers, enums and bounded
// one-line reasons: task instructions, briefs, worker answers, credentials and environments never appear.
import { z } from "zod";

const executor = z.enum(["codex", "claude"]);
const reason = z.string().max(300);
// "partial": some selected sources answered and some did not (older records never hold it).
const knowledgeStatus = z.enum(["ok", "empty", "partial", "failed", "skipped"]);

/** Tokens and price of one turn, a task's turns or the whole session, as the executors reported them. */
export const usageSchema = z.object({
  input_tokens: z.number().int().min(0),
  /** Of input_tokens, those read from the vendor's prompt cache. */
  cached_input_tokens: z.number().int().min(0),
  output_tokens: z.number().int().min(0),
  /** US dollars, when the vendor says (claude does; codex does not): null when no turn said. */
  cost_usd: z.number().min(0).nullable(),
});
export type Usage = z.infer<typeof usageSchema>;

/** What a turn was for: the role marker of its prompt. */
export const TURN_KINDS = ["answer", "plan", "repair", "worker", "consolidate"] as const;
export type TurnKind = (typeof TURN_KINDS)[number];

/**
 * A sum over turns: how many turns it counts, and how many of those spent tokens without saying a price
 * (when > 0, cost_usd is a lower bound).
 */
const sessionUsageSchema = usageSchema.extend({
  turns: z.number().int().min(0).default(0),
  unpriced_turns: z.number().int().min(0).default(0),
});
export type SessionUsage = z.infer<typeof sessionUsageSchema>;

function EMPTY_SESSION_USAGE(): SessionUsage {
  return {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    turns: 0,
    unpriced_turns: 0,
  };
}

export const autoTaskSchema = z.object({
  id: z.string().max(40),
  kind: z.enum(["research", "analysis", "review", "change"]),
  /** "plan" for the planner's tasks, "delegated" for tasks the primary started through ivoai-orchestrator. */
  origin: z.enum(["plan", "delegated"]),
  depends_on: z.array(z.string().max(40)).max(12),
  signals: z.object({
    complexity: z.number(),
    context_need: z.number(),
    risk: z.number(),
    ambiguity: z.number(),
    est_tokens: z.number().int(),
  }),
  score: z.number(),
  tier: z.number().int().min(1).max(3),
  profile: z
    .object({ id: z.string(), executor, model: z.string().max(80), effort: z.string().max(20) })
    .nullable(),
  profile_origin: z.enum(["scores", "escalated", "failover", "primary"]),
  state: z.enum(["pending", "running", "done", "failed", "skipped", "primary", "cancelled"]),
  reason: reason.nullable(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  /** Time spent inside executor turns (all attempts); duration_ms minus this is ivoai's own cost. */
  executor_ms: z.number().int().nullable(),
  escalations: z.array(reason).max(4),
  refs: z
    .array(
      z.object({
        ref: z.string(),
        bytes: z.number().int(),
        sha256: z.string(),
        expires_at: z.string(),
      }),
    )
    .max(8),
  /** The sum of this task's turns (every attempt); null before its first turn ends. */
  usage: usageSchema.nullable().default(null),
});
export type AutoTask = z.infer<typeof autoTaskSchema>;

export const autoStateSchema = z.object({
  phase: z.enum([
    "starting",
    "knowledge",
    "planning",
    "running",
    "consolidating",
    "answering",
    "done",
    "failed",
    "stopped",
  ]),
  /** Increases with every recorded change: the last one survives a crash. */
  checkpoint: z.object({ seq: z.number().int(), at: z.string() }),
  route: z.object({ kind: z.enum(["rag", "plan"]), reason }).nullable(),
  planner: executor,
  /** The executor that currently owns the primary conversation. */
  primary: executor,
  workers: z.number().int().min(1).max(3),
  knowledge: z
    .object({ memory: knowledgeStatus, context: knowledgeStatus, brief_bytes: z.number().int() })
    .nullable(),
  plan: z.object({ attempts: z.number().int(), repaired: z.boolean(), tasks: z.number().int() }).nullable(),
  tasks: z.array(autoTaskSchema).max(40),
  failovers: z
    .array(
      z.object({
        at: z.string(),
        scope: z.enum(["primary", "task"]),
        task_id: z.string().nullable(),
        from: executor,
        to: executor,
        reason,
        /** From the hard-limit event to the alternate's first event. */
        handoff_ms: z.number().int().nullable(),
        /** The limit that moved it (usage_limit, rate_limit) or "admission" when quota headroom refused it. */
        limit_kind: z.string().max(20).nullable().default(null),
        /** When the limit resets, as the vendor said; null when it did not. */
        resets_at: z.string().nullable().default(null),
        /** The profile the work moved to (the primary's model is the CLI's default: null). */
        to_model: z.string().max(80).nullable().default(null),
        /** Other tasks that hit the same limit and moved with this failover. */
        joined: z.array(z.string().max(40)).max(12).default([]),
      }),
    )
    .max(8),
  admissions: z.array(z.object({ at: z.string(), executor, admitted: z.boolean(), reason })).max(40),
  context_pressure: z.record(z.string(), z.object({ ratio: z.number(), level: z.string().max(10) })),
  /** The official CLIs' own conversation ids (not secrets): follow-up turns and recovery resume them. */
  threads: z.object({ codex: z.string().max(200).nullable(), claude: z.string().max(200).nullable() }),
  scheduling_overhead_ms: z.number().nullable(),
  /** Executor CLIs running now (pid = process group, with its /proc start time): reaped after a crash. */
  processes: z
    .array(z.object({ pid: z.number().int(), start_ticks: z.string().nullable() }))
    .max(16)
    .default([]),
  error: reason.nullable(),
  /** Every executor turn, newest last (at most 64 kept; `usage` keeps the whole session's sum). */
  turns: z
    .array(
      z.object({
        at: z.string(),
        kind: z.enum(TURN_KINDS),
        task_id: z.string().max(40).nullable(),
        executor,
        model: z.string().max(80).nullable(),
        status: z.string().max(20),
        duration_ms: z.number().int(),
        usage: usageSchema.nullable(),
      }),
    )
    .max(64)
    .default([]),
  /** The whole session's tokens and price, every turn counted (also those beyond `turns`). */
  usage: sessionUsageSchema.default(EMPTY_SESSION_USAGE()),
  /** The same sums per executor (what `ivoai usage` adds up by day and executor). */
  usage_by_executor: z
    .object({ codex: sessionUsageSchema.optional(), claude: sessionUsageSchema.optional() })
    .default({}),
  /**
   * The knowledge servers: configured (enabled), selected for this session, excluded by the selection (with
   * why), and those that failed to answer the brief. Null before the knowledge phase.
   */
  sources: z
    .object({
      configured: z.array(z.string().max(80)).max(64),
      selected: z.array(z.string().max(80)).max(64),
      excluded: z.array(z.object({ alias: z.string().max(80), reason })).max(64),
      failed: z.array(z.object({ alias: z.string().max(80), reason })).max(64),
    })
    .nullable()
    .default(null),
  /**
   * The repository the session worked in: its root, the commit checked out at start (null in a repository
   * without commits), a tree object of the working tree at start (untracked files included, ignored ones not)
   * and, with --worktree, the worktree and branch the session ran in. Null outside a git repository.
   */
  repo: z
    .object({
      root: z.string().max(4096),
      base_commit: z.string().max(64).nullable(),
      base_tree: z.string().max(64),
      dirty: z.boolean(),
      worktree: z.object({ path: z.string().max(4096), branch: z.string().max(200) }).nullable(),
    })
    .nullable()
    .default(null),
  /** Each time `ivoai session resume` continued the session, and the checkpoint it continued from. */
  resumes: z
    .array(z.object({ at: z.string(), from_checkpoint: z.number().int(), pid: z.number().int() }))
    .max(16)
    .default([]),
});
export type AutoState = z.infer<typeof autoStateSchema>;

/** The state an orchestrated session starts with. */
export function initialAutoState(planner: AutoState["planner"], workers: number): AutoState {
  return {
    phase: "starting",
    checkpoint: { seq: 0, at: new Date().toISOString() },
    route: null,
    planner,
    primary: planner,
    workers,
    knowledge: null,
    plan: null,
    tasks: [],
    failovers: [],
    admissions: [],
    context_pressure: {},
    threads: { codex: null, claude: null },
    scheduling_overhead_ms: null,
    processes: [],
    error: null,
    turns: [],
    usage: EMPTY_SESSION_USAGE(),
    usage_by_executor: {},
    sources: null,
    repo: null,
    resumes: [],
  };
}
