// What an orchestrated (AUTO) session records about itself: the route, the plan's task metadata, profiles,
// states, durations, escalations, failovers and quota admissions. Only ids, numbers, enums and bounded
// one-line reasons: task instructions, briefs, worker answers, credentials and environments never appear.
import { z } from "zod";

const executor = z.enum(["codex", "claude"]);
const reason = z.string().max(300);
const knowledgeStatus = z.enum(["ok", "empty", "failed", "skipped"]);

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
  };
}
