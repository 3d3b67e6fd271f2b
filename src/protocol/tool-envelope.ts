// Seed 004's tool response contract: every ivoai tool result's structuredContent is {status, data, telemetry}.
import { z } from "zod";

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

export const toolEnvelopeShape = {
  status: z.enum(TOOL_STATUSES),
  data: z.record(z.string(), z.unknown()),
  telemetry: toolTelemetrySchema,
};
export const toolEnvelopeSchema = z.object(toolEnvelopeShape);

export type ToolTelemetry = z.infer<typeof toolTelemetrySchema>;
export type ToolEnvelope = z.infer<typeof toolEnvelopeSchema>;

/** A rough token estimate of a result (≈ 4 characters per token), for telemetry only. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
