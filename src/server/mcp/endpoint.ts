// One Streamable HTTP MCP endpoint over a list of tool specs, with the official SDK (stateless, JSON responses).
// Every call passes the guardrail (scope, schema, size) and returns seed 004's envelope beside a text rendering.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import type { Scope } from "../../protocol/scopes.js";
import {
  estimateTokens,
  type SecurityTier,
  type ToolEnvelope,
  type ToolStatus,
  toolEnvelopeShape,
} from "../../protocol/tool-envelope.js";
import type { ToolName, ToolTable } from "../../protocol/tools.js";
import { isIvoaiError } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { ApprovalGate, Proposal } from "../approvals/gate.js";
import type { AuditLog, ToolCallEvent } from "../audit/store.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import type { ApprovalRecord } from "../memory/store.js";

export interface ToolContext {
  client: AuthenticatedClient;
  /** The agent session, when the caller names it (header x-ivoai-session-id). */
  sessionId: string | null;
  /** The caller's project scope, when it names one (header x-ivoai-project). */
  project: string | null;
}

export interface ToolOutcome {
  status?: ToolStatus;
  data: Record<string, unknown>;
  /** What a model reads; document text inside must already be labelled untrusted. */
  text: string;
}

interface ToolSpecBase<Shape extends z.ZodRawShape> {
  name: ToolName;
  title: string;
  description: string;
  scope: Scope;
  input: Shape;
}

/** A read tool runs at once. */
export interface ReadToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> extends ToolSpecBase<Shape> {
  tier: "read";
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<ToolOutcome>;
}

/** A write or admin tool only proposes: the endpoint files the proposal with the approval gate. */
export interface WriteToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> extends ToolSpecBase<Shape> {
  tier: Exclude<SecurityTier, "read">;
  propose(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<Proposal>;
}

export type ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> =
  | ReadToolSpec<Shape>
  | WriteToolSpec<Shape>;

/**
 * Keeps a tool's arguments and its shape tied together while a list holds specs of different shapes. The name
 * must be in the protocol's tool table and the tier and scope must be the table's, or this fails to type-check.
 */
export function defineTool<Name extends ToolName, Shape extends z.ZodRawShape>(
  spec: ToolSpec<Shape> & { name: Name; tier: ToolTable[Name]["tier"]; scope: ToolTable[Name]["scope"] },
): ToolSpec {
  return spec as unknown as ToolSpec;
}

export interface McpEndpointOptions {
  name: string;
  instructions: string;
  tools: readonly ToolSpec[];
  logger: Logger;
  /** Where write-tier proposals go; required when any tool is not read-only. */
  gate?: ApprovalGate;
  /** Every call is recorded here (tool, credential, session, tier, status, latency, tokens, guardrail). */
  audit?: AuditLog;
  /** Results larger than this (characters of text) fail instead of flooding a model's context. */
  maxResultChars?: number;
  /** Tool arguments larger than this (bytes of JSON) are refused by the guardrail. */
  maxInputBytes?: number;
  /** Adds resources or extension methods to each request's server (e.g. the skills of Web MCP). */
  extend?: (server: McpServer) => void;
  /** Extra server capabilities to announce. */
  capabilities?: Record<string, unknown>;
}

export type McpEndpoint = (request: Request, client: AuthenticatedClient) => Promise<Response>;

let validator: AjvJsonSchemaValidator | undefined;
/** The JSON Schema validator every per-request server shares (built on first use). */
function sharedValidator(): AjvJsonSchemaValidator {
  validator ??= new AjvJsonSchemaValidator();
  return validator;
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const maxResultChars = options.maxResultChars ?? 16 * 1024 * 1024;
  const maxInputBytes = options.maxInputBytes ?? 1024 * 1024;
  if (!options.gate && options.tools.some((tool) => tool.tier !== "read")) {
    throw new Error(`MCP endpoint ${options.name} has write tools but no approval gate`);
  }
  return async (request, client) => {
    const context: ToolContext = {
      client,
      sessionId: headerValue(request, "x-ivoai-session-id"),
      project: headerValue(request, "x-ivoai-project"),
    };
    const server = new McpServer(
      { name: options.name, version: IVOAI_VERSION },
      {
        instructions: options.instructions,
        capabilities: { tools: {}, ...options.capabilities },
        // One validator for every request: the SDK's default builds a new Ajv (all its vocabularies) per server.
        jsonSchemaValidator: sharedValidator(),
      },
    );
    options.extend?.(server);
    const offered = new Map<string, ToolSpec>();
    for (const tool of options.tools) {
      // Tools the credential may not use are not offered at all.
      if (!client.scopes.includes(tool.scope)) continue;
      offered.set(tool.name, tool);
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input,
          outputSchema: toolEnvelopeShape,
          annotations: {
            title: tool.title,
            readOnlyHint: tool.tier === "read",
            destructiveHint: tool.tier !== "read",
            openWorldHint: false,
          },
        },
        async (args: Record<string, unknown>) => invoke(tool, args, context),
      );
    }
    // tools/call is answered here rather than by McpServer, so that a call refused before any tool runs
    // (unknown tool, arguments failing the schema) is audited too; the answers match the SDK's.
    server.server.setRequestHandler(CallToolRequestSchema, async (call) => {
      const name = call.params.name;
      const tool = offered.get(name);
      if (!tool) {
        const known = options.tools.some((spec) => spec.name === name);
        return reject(
          name,
          undefined,
          known ? "insufficient_scope" : "unknown_tool",
          `Tool ${name} not found`,
          context,
        );
      }
      const parsed = await z.object(tool.input).safeParseAsync(call.params.arguments ?? {});
      if (parsed.success) return invoke(tool, parsed.data, context);
      const issues = parsed.error.issues
        .map((issue) => (issue.path.length ? `${issue.message} at ${issue.path.join(".")}` : issue.message))
        .join("\n");
      return reject(
        name,
        tool,
        "invalid_arguments",
        `Input validation error: Invalid arguments for tool ${name}: ${issues}`,
        context,
      );
    });
    // Stateless: no session id option at all, one server + transport per HTTP request.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, {
        authInfo: { token: "", clientId: client.id, scopes: [...client.scopes] },
      });
    } finally {
      void server.close();
    }
  };

  /** A call refused before its tool ran: an error result, audited with status REJECTED. */
  function reject(
    name: string,
    tool: ToolSpec | undefined,
    reason: "unknown_tool" | "insufficient_scope" | "invalid_arguments",
    message: string,
    context: ToolContext,
  ): CallToolResult {
    record({
      kind: "tool_call",
      // The name is the caller's text: bounded before it reaches the log.
      tool: name.slice(0, 128),
      endpoint: options.name,
      credential_id: context.client.id,
      session_id: context.sessionId,
      tier: tool?.tier ?? null,
      status: "REJECTED",
      latency_ms: 0,
      tokens_consumed: 0,
      guardrail_checked: true,
      detail: { rejected: reason, message: message.slice(0, 1000) },
    });
    return { content: [{ type: "text", text: message }], isError: true };
  }

  function record(event: ToolCallEvent): void {
    // A failed write cannot fail the agent's call: the audit log writes after it and reports failures itself.
    options.audit?.record(event);
    options.logger.info("tool call", { ...event });
  }

  async function invoke(
    tool: ToolSpec,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<CallToolResult> {
    const started = performance.now();
    let outcome: ToolOutcome;
    let isError = false;
    let detail: Record<string, unknown> | undefined;
    try {
      const refusal = guardrail(tool, args, context);
      if (refusal) {
        isError = true;
        detail = { refused: refusal };
        outcome = {
          status: "FAILED",
          data: { error: refusal },
          text: `Refused by the guardrail: ${refusal}`,
        };
      } else if (tool.tier === "read") {
        outcome = await tool.run(args as never, context);
        if (outcome.text.length > maxResultChars) {
          isError = true;
          outcome = {
            status: "FAILED",
            data: { error: "result_too_large" },
            text: "The result is too large to return.",
          };
        }
      } else {
        const approval = await (options.gate as ApprovalGate).propose(
          await tool.propose(args as never, context),
        );
        detail = { approval_id: approval.id };
        outcome = pendingOutcome(approval);
      }
    } catch (error) {
      isError = true;
      const message = isIvoaiError(error) ? error.message : "the tool failed";
      if (!isIvoaiError(error)) {
        options.logger.error("tool failed", {
          tool: tool.name,
          error: error instanceof Error ? error.message : String(error),
        });
      }
      outcome = { status: "FAILED", data: { error: message }, text: `Error: ${message}` };
    }
    const envelope: ToolEnvelope = {
      status: outcome.status ?? "SUCCESS",
      data: outcome.data,
      telemetry: {
        latency_ms: Math.round(performance.now() - started),
        tokens_consumed: estimateTokens(outcome.text),
        guardrail_checked: true,
      },
    };
    record({
      kind: "tool_call",
      tool: tool.name,
      endpoint: options.name,
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

  /** Scope and size, checked again at the tool boundary (the schema was checked by the SDK). */
  function guardrail(
    tool: ToolSpec,
    args: Record<string, unknown>,
    context: ToolContext,
  ): string | undefined {
    if (!context.client.scopes.includes(tool.scope))
      return `insufficient_scope: ${tool.name} needs ${tool.scope}`;
    if (Buffer.byteLength(JSON.stringify(args ?? {})) > maxInputBytes) {
      return `input_too_large: arguments are limited to ${maxInputBytes} bytes`;
    }
    return undefined;
  }
}

function pendingOutcome(approval: ApprovalRecord): ToolOutcome {
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

function headerValue(request: Request, name: string): string | null {
  const value = request.headers.get(name)?.trim();
  return value && /^[\w:./@-]{1,256}$/.test(value) ? value : null;
}
