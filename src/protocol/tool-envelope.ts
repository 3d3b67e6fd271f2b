// Seed 004's tool response contract: every ivoai tool result's structuredContent is {status, data, telemetry},
// and every tool lists an outputSchema saying exactly what its data holds (so strict clients see no open schema).
import { z } from "zod";
import type { ApprovalAction, ApprovalStatus } from "./approvals.js";

export const TOOL_STATUSES = ["SUCCESS", "FAILED", "PENDING_HUMAN_APPROVAL"] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];
export type SecurityTier = "read" | "write" | "admin";

/**
 * What a session id or project name sent in `x-ivoai-session-id`/`x-ivoai-project` may be (anything else is
 * recorded as none), and so what the audit timeline accepts as a session id.
 */
export const SESSION_ID_PATTERN = /^[\w:./@-]{1,256}$/;

export const toolTelemetrySchema = z.object({
  latency_ms: z.number().int().nonnegative(),
  tokens_consumed: z.number().int().nonnegative(),
  guardrail_checked: z.boolean(),
});

/**
 * `T | null`, listed as `anyOf` with a described null branch: zod lists a union of bare types as a `type` array,
 * which the MCP Inspector's `--strict` mode warns about (rule type-union) as less portable.
 */
export function nullable<T extends z.ZodType>(schema: T) {
  return z.union([schema, z.null().describe("No value")]);
}

/** A value of a string-keyed metadata map: a scalar, never a nested structure. */
export const metadataValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null().describe("No value"),
]);
export type MetadataValue = z.infer<typeof metadataValueSchema>;
export const metadataSchema = z.record(z.string(), metadataValueSchema);

/** A call's data when it failed (guardrail refusal, error, result too large). */
export const failedDataSchema = z.object({ error: z.string().describe("Why the call failed") });

const APPROVAL_STATUSES = [
  "pending",
  "applied",
  "rejected",
  "expired",
  "conflict",
] as const satisfies readonly ApprovalStatus[];
const APPROVAL_ACTIONS = [
  "write_page",
  "delete_page",
  "feedback",
] as const satisfies readonly ApprovalAction[];
export const approvalStatusSchema = z.enum(APPROVAL_STATUSES);
export const approvalActionSchema = z.enum(APPROVAL_ACTIONS);

/** A write tool's data: the approval request its proposal became (status PENDING_HUMAN_APPROVAL). */
export const pendingDataSchema = z.object({
  approval_id: z.string(),
  status: approvalStatusSchema,
  action: approvalActionSchema,
  scope: z.string(),
  path: z.string(),
  summary: z.string(),
  diff: z.string(),
  expires_at: z.string(),
  poll_with: z.literal("memory_approval_status"),
});
export type PendingData = z.infer<typeof pendingDataSchema>;

/**
 * The envelope of one tool's results, its data described exactly: a read tool's success data (`success`) or a
 * failure; a write tool's pending approval or a failure.
 */
export function toolEnvelopeSchema<Success extends z.ZodObject>(tier: "read", success: Success): z.ZodObject;
export function toolEnvelopeSchema(tier: Exclude<SecurityTier, "read">): z.ZodObject;
export function toolEnvelopeSchema(tier: SecurityTier, success?: z.ZodObject): z.ZodObject {
  const read = tier === "read";
  return z.object({
    status: z.enum(read ? ["SUCCESS", "FAILED"] : ["PENDING_HUMAN_APPROVAL", "FAILED"]),
    data: z.union([read ? (success as z.ZodObject) : pendingDataSchema, failedDataSchema]),
    telemetry: toolTelemetrySchema,
  });
}

export type ToolTelemetry = z.infer<typeof toolTelemetrySchema>;
export type ToolEnvelope<Data extends object = object> = {
  status: ToolStatus;
  data: Data;
  telemetry: ToolTelemetry;
};

/** A rough token estimate of a result (≈ 4 characters per token), for telemetry only. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
