// One tools/call, whichever path answers it: refused before the tool runs (unknown tool, scope, arguments), or
// run through the guardrail (scope, size) to seed 004's envelope beside a text rendering; audited either way.
import type { CallToolRequest, CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { estimateTokens, type PendingData, type ToolEnvelope } from "../../protocol/tool-envelope.js";
import type { ApprovalGate } from "../approvals/gate.js";
import type { ToolCallEvent } from "../audit/store.js";
import type { ApprovalRecord } from "../memory/store.js";
import type { EndpointState, OfferedTools } from "./endpoint-state.js";
import { createMcpLog, logLevelKey, type McpLog } from "./logging.js";
import { inputSchema, type ToolContext, type ToolOutcome, type ToolSpec } from "./tool-spec.js";
import { publicFailure } from "./wire-error.js";

type RefusalReason = "unknown_tool" | "insufficient_scope" | "invalid_arguments";

/** How a run ended: its outcome, whether it is an error result, and what the audit event adds. */
interface Ran {
  outcome: ToolOutcome;
  isError: boolean;
  detail?: Record<string, unknown>;
}

/** Answers one tools/call: the offered tool with arguments its schema accepts runs; anything else is refused. */
export async function callTool(
  state: EndpointState,
  params: CallToolRequest["params"],
  offered: OfferedTools,
  context: ToolContext,
): Promise<CallToolResult> {
  const name = params.name;
  const tool = offered.get(name);
  if (!tool) {
    const known = state.options.tools.some((spec) => spec.name === name);
    const reason = known ? "insufficient_scope" : "unknown_tool";
    return reject(state, name, undefined, reason, `Tool ${name} not found`, context);
  }
  const parsed = await inputSchema(tool).safeParseAsync(params.arguments ?? {});
  if (parsed.success) return invoke(state, tool, parsed.data, context);
  const issues = parsed.error.issues
    .map((issue) => (issue.path.length ? `${issue.message} at ${issue.path.join(".")}` : issue.message))
    .join("\n");
  const message = `Input validation error: Invalid arguments for tool ${name}: ${issues}`;
  return reject(state, name, tool, "invalid_arguments", message, context);
}

/** The context with a log for this request, when the caller set a level. */
export function withLog(
  state: EndpointState,
  context: ToolContext,
  send: Parameters<typeof createMcpLog>[1],
): ToolContext {
  const level = state.logLevels.get(logLevelKey(context.client.id, context.sessionId));
  return level === undefined ? context : { ...context, log: createMcpLog(level, send) };
}

/** A call refused before its tool ran: an error result, audited with status REJECTED. */
async function reject(
  state: EndpointState,
  name: string,
  tool: ToolSpec | undefined,
  reason: RefusalReason,
  message: string,
  context: ToolContext,
): Promise<CallToolResult> {
  record(state, {
    kind: "tool_call",
    // The name is the caller's text: bounded before it reaches the log.
    tool: name.slice(0, 128),
    endpoint: state.options.name,
    credential_id: context.client.id,
    session_id: context.sessionId,
    tier: tool?.tier ?? null,
    status: "REJECTED",
    latency_ms: 0,
    tokens_consumed: 0,
    guardrail_checked: true,
    detail: { rejected: reason, message: message.slice(0, 1000) },
  });
  await context.log?.("warning", {
    message: `Refused by the guardrail (${reason})`,
    tool: name.slice(0, 128),
    reason,
  });
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Records a call in the audit log (and the server log). */
export function record(state: EndpointState, event: ToolCallEvent): void {
  const { audit, logger } = state.options;
  // A failed write cannot fail the agent's call: the audit log writes after it and reports failures itself.
  void audit?.record(event);
  // The audit log is the record of calls (the HTTP request line says one happened): the log repeats it at
  // debug level only, or at info when this endpoint has no audit log.
  if (audit) logger.debug("tool call", { ...event });
  else logger.info("tool call", { ...event });
}

/** Runs a tool whose arguments passed its schema, and answers its envelope (audited). */
export async function invoke(
  state: EndpointState,
  tool: ToolSpec,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<CallToolResult> {
  const started = performance.now();
  const { outcome, isError, detail } = await runGuarded(state, tool, args, context);
  const envelope: ToolEnvelope = {
    status: outcome.status ?? "SUCCESS",
    data: outcome.data,
    telemetry: {
      latency_ms: Math.round(performance.now() - started),
      tokens_consumed: estimateTokens(outcome.text),
      guardrail_checked: true,
    },
  };
  if (context.log) await logCall(state, context.log, tool, envelope);
  record(state, {
    kind: "tool_call",
    tool: tool.name,
    endpoint: state.options.name,
    credential_id: context.client.id,
    session_id: context.sessionId,
    tier: tool.tier,
    status: envelope.status,
    ...envelope.telemetry,
    ...(detail ? { detail } : {}),
  });
  return {
    content: [{ type: "text", text: outcome.text }],
    structuredContent: envelope,
    ...(isError ? { isError: true } : {}),
  };
}

async function runGuarded(
  state: EndpointState,
  tool: ToolSpec,
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<Ran> {
  try {
    const refusal = guardrail(state, tool, args, context);
    if (refusal) return await refused(tool, refusal, context);
    if (tool.tier === "read") return await runRead(state, tool, args, context);
    return await propose(state, tool, args, context);
  } catch (error) {
    return await failed(state, tool, error, context);
  }
}

/** Scope and size, checked again at the tool boundary (the schema was checked before). */
function guardrail(
  state: EndpointState,
  tool: ToolSpec,
  args: Record<string, unknown>,
  context: ToolContext,
): string | undefined {
  if (!context.client.scopes.includes(tool.scope))
    return `insufficient_scope: ${tool.name} needs ${tool.scope}`;
  if (Buffer.byteLength(JSON.stringify(args ?? {})) > state.maxInputBytes) {
    return `input_too_large: arguments are limited to ${state.maxInputBytes} bytes`;
  }
  return undefined;
}

async function refused(tool: ToolSpec, refusal: string, context: ToolContext): Promise<Ran> {
  await context.log?.("warning", { message: `Refused by the guardrail: ${refusal}`, tool: tool.name });
  return {
    isError: true,
    detail: { refused: refusal },
    outcome: { status: "FAILED", data: { error: refusal }, text: `Refused by the guardrail: ${refusal}` },
  };
}

async function runRead(
  state: EndpointState,
  tool: ToolSpec & { tier: "read" },
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<Ran> {
  const outcome = await tool.run(args as never, context);
  if (outcome.text.length <= state.maxResultChars)
    return { outcome, isError: false, ...(outcome.audit ? { detail: outcome.audit } : {}) };
  await context.log?.("warning", {
    message: "The result is too large to return",
    tool: tool.name,
    chars: outcome.text.length,
    limit_chars: state.maxResultChars,
  });
  return {
    isError: true,
    outcome: {
      status: "FAILED",
      data: { error: "result_too_large" },
      text: "The result is too large to return.",
    },
  };
}

/** A write tool's proposal, filed with the approval gate: the call answers PENDING_HUMAN_APPROVAL. */
async function propose(
  state: EndpointState,
  tool: ToolSpec & { tier: Exclude<ToolSpec["tier"], "read"> },
  args: Record<string, unknown>,
  context: ToolContext,
): Promise<Ran> {
  const gate = state.options.gate as ApprovalGate;
  const approval = await gate.propose(await tool.propose(args as never, context));
  await context.log?.("info", {
    message: "Change proposed: it waits for a person's approval",
    tool: tool.name,
    approval_id: approval.id,
    scope: approval.scope,
    path: approval.path,
    poll_with: "memory_approval_status",
  });
  return { outcome: pendingOutcome(approval), isError: false, detail: { approval_id: approval.id } };
}

/** A tool that threw: answered by the wire's one error policy. */
async function failed(
  state: EndpointState,
  tool: ToolSpec,
  error: unknown,
  context: ToolContext,
): Promise<Ran> {
  const { text } = publicFailure(error, {
    logger: state.options.logger,
    requestId: context.requestId,
    msg: "tool failed",
    fields: { tool: tool.name },
  });
  await context.log?.("error", { message: `The tool failed: ${text}`, tool: tool.name });
  return { isError: true, outcome: { status: "FAILED", data: { error: text }, text: `Error: ${text}` } };
}

/** What the caller may want to know of a finished call: a slow read, and (debug) every call's outcome. */
async function logCall(
  state: EndpointState,
  log: McpLog,
  tool: ToolSpec,
  envelope: ToolEnvelope,
): Promise<void> {
  const { latency_ms, tokens_consumed } = envelope.telemetry;
  if (tool.tier === "read" && latency_ms >= state.slowCallMs) {
    await log("notice", { message: `${tool.name} was slow (${latency_ms} ms)`, tool: tool.name, latency_ms });
  }
  await log("debug", {
    message: "tool call",
    tool: tool.name,
    status: envelope.status,
    latency_ms,
    tokens_consumed,
  });
}

function pendingOutcome(approval: ApprovalRecord): ToolOutcome<PendingData> {
  return {
    status: "PENDING_HUMAN_APPROVAL",
    data: {
      approval_id: approval.id,
      status: approval.status,
      action: approval.action,
      scope: approval.scope,
      path: approval.path,
      summary: approval.summary,
      diff: approval.diff,
      expires_at: approval.expires_at,
      poll_with: "memory_approval_status",
    },
    text:
      `Not applied yet: a person must approve this change (approval ${approval.id}). ${approval.summary}\n` +
      `Poll memory_approval_status with approval_id "${approval.id}".\n\n${approval.diff}`,
  };
}
