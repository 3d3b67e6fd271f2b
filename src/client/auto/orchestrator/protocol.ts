// What the ivoai-orchestrator MCP and the supervisor say to each other over the private control channel: the
// three operations' inputs and answers as zod schemas (validated on both sides) and the supervisor's handlers.
import { z } from "zod";
import { ARTIFACT_REF_PATTERN, MAX_ARTIFACT_READ_BYTES, TASK_ID_PATTERN } from "../artifacts.js";
import {
  MAX_FINDING_CHARS,
  MAX_FINDINGS,
  MAX_PLAN_TASKS,
  MAX_SUMMARY_CHARS,
  resultRefSchema,
  type TaskState,
  taskSignalsSchema,
  type WorkerResult,
} from "../contracts.js";

export const taskIdSchema = z
  .string()
  .regex(TASK_ID_PATTERN, "task ids are 1-64 of A-Z, a-z, 0-9, '_', '.', ':' and '-'");

export const delegateInputSchema = z.strictObject({
  instructions: z.string().min(1).max(4000),
  kind: z.enum(["research", "analysis", "review"]),
  depends_on: z.array(taskIdSchema).max(MAX_PLAN_TASKS).optional(),
  signals: taskSignalsSchema.partial().optional(),
});
export type DelegateInput = z.infer<typeof delegateInputSchema>;

export const statusInputSchema = z.strictObject({ task_id: taskIdSchema.optional() });

export const readArtifactInputSchema = z.strictObject({
  ref: z.string().regex(ARTIFACT_REF_PATTERN, "refs are art_ followed by 32 hex digits"),
  offset: z.number().int().min(0).optional(),
  length: z.number().int().min(1).max(MAX_ARTIFACT_READ_BYTES).optional(),
});

const TASK_STATES = ["pending", "running", "done", "failed", "skipped", "primary", "cancelled"] as const;
const taskStateSchema = z.enum(TASK_STATES) satisfies z.ZodType<TaskState>;

export const delegateOutcomeSchema = z.object({
  task_id: z.string(),
  state: taskStateSchema,
  reason: z.string().max(1000),
});
export type DelegateOutcome = z.infer<typeof delegateOutcomeSchema>;

export const workerResultSchema = z.object({
  task_id: z.string(),
  status: z.enum(["done", "failed"]),
  summary: z.string().max(MAX_SUMMARY_CHARS),
  findings: z.array(z.string().max(MAX_FINDING_CHARS)).max(MAX_FINDINGS),
  state_delta: z.object({
    advisory: z.literal(true),
    changes: z
      .array(z.object({ path: z.string().max(300), change: z.string().max(MAX_FINDING_CHARS) }))
      .max(50),
  }),
  refs: z.array(resultRefSchema).max(50),
}) satisfies z.ZodType<WorkerResult>;

export const statusOutcomeSchema = z.object({
  tasks: z
    .array(z.object({ task_id: z.string(), state: taskStateSchema, result: workerResultSchema.optional() }))
    .max(64),
});
export type StatusOutcome = z.infer<typeof statusOutcomeSchema>;

export const artifactRangeSchema = z.object({
  text: z.string(),
  offset: z.number().int().min(0),
  next_offset: z.number().int().min(0).nullable(),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ArtifactRangeOutcome = z.infer<typeof artifactRangeSchema>;

/** What the supervisor does for the primary's orchestrator tools. Throw IvoaiError for a clear refusal. */
export interface ControlHandlers {
  delegate(input: DelegateInput): Promise<DelegateOutcome>;
  /** One task (when named) or all of them; `result` only once a task is done or failed. */
  status(taskId?: string): Promise<StatusOutcome>;
  /** Reads the primary session's artifact (ownership, TTL and digest are the store's checks). */
  readArtifact(ref: string, offset?: number, length?: number): Promise<ArtifactRangeOutcome>;
}

/** The control channel's routes, one per operation. */
export const CONTROL_ROUTES = {
  delegate: "/v1/delegate",
  status: "/v1/status",
  readArtifact: "/v1/read_artifact",
} as const;

/** Request bodies over this are refused (413). */
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;
/** Answers over this are refused by the client (64 bounded WorkerResults fit). */
export const MAX_CONTROL_RESPONSE_BYTES = 4 * 1024 * 1024;
