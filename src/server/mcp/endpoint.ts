// One Streamable HTTP MCP endpoint over a list of tool specs, with the official SDK (stateless, JSON responses).
// Every call passes the guardrail (scope, schema, size) and returns seed 004's envelope beside a text rendering.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { Scope } from "../../protocol/scopes.js";
import {
  estimateTokens,
  type SecurityTier,
  type ToolEnvelope,
  type ToolStatus,
  toolEnvelopeShape,
} from "../../protocol/tool-envelope.js";
import { isIvoaiError } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { AuthenticatedClient } from "../enrollment/service.js";

export interface ToolContext {
  client: AuthenticatedClient;
}

export interface ToolOutcome {
  status?: ToolStatus;
  data: Record<string, unknown>;
  /** What a model reads; document text inside must already be labelled untrusted. */
  text: string;
}

export interface ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  tier: SecurityTier;
  scope: Scope;
  input: Shape;
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<ToolOutcome>;
}

/** Keeps a tool's arguments and its shape tied together while a list holds specs of different shapes. */
export function defineTool<Shape extends z.ZodRawShape>(spec: ToolSpec<Shape>): ToolSpec {
  return spec as unknown as ToolSpec;
}

export interface McpEndpointOptions {
  name: string;
  instructions: string;
  tools: readonly ToolSpec[];
  logger: Logger;
  /** Results larger than this (characters of text) fail instead of flooding a model's context. */
  maxResultChars?: number;
}

export type McpEndpoint = (request: Request, client: AuthenticatedClient) => Promise<Response>;

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const maxResultChars = options.maxResultChars ?? 16 * 1024 * 1024;
  return async (request, client) => {
    const server = new McpServer(
      { name: options.name, version: IVOAI_VERSION },
      { instructions: options.instructions, capabilities: { tools: {} } },
    );
    for (const tool of options.tools) {
      // Tools the credential may not use are not offered at all.
      if (!client.scopes.includes(tool.scope)) continue;
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
        async (args: Record<string, unknown>) => invoke(tool, args, client),
      );
    }
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

  async function invoke(
    tool: ToolSpec,
    args: Record<string, unknown>,
    client: AuthenticatedClient,
  ): Promise<CallToolResult> {
    const started = performance.now();
    let outcome: ToolOutcome;
    let isError = false;
    try {
      outcome = await tool.run(args as never, { client });
      if (outcome.text.length > maxResultChars) {
        outcome = {
          status: "FAILED",
          data: { error: "result_too_large" },
          text: "The result is too large to return.",
        };
        isError = true;
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
    options.logger.info("tool call", {
      tool: tool.name,
      client_id: client.id,
      tier: tool.tier,
      status: envelope.status,
      latency_ms: envelope.telemetry.latency_ms,
      tokens_consumed: envelope.telemetry.tokens_consumed,
    });
    return {
      content: [{ type: "text", text: outcome.text }],
      structuredContent: envelope,
      ...(isError ? { isError: true } : {}),
    };
  }
}
