// One Streamable HTTP MCP endpoint over a list of tool specs, with the official SDK (stateless, JSON responses);
// tools/call and tools/list, what agents repeat, are answered from tables built once per scope set.
// Every call passes the guardrail (scope, schema, size) and returns seed 004's envelope beside a text rendering.

import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import type { Scope } from "../../protocol/scopes.js";
import {
  estimateTokens,
  type PendingData,
  SESSION_ID_PATTERN,
  type SecurityTier,
  type ToolEnvelope,
  type ToolStatus,
  toolEnvelopeSchema,
} from "../../protocol/tool-envelope.js";
import type { ToolName, ToolTable } from "../../protocol/tools.js";
import type { Logger } from "../../shared/logger.js";
import { answerMalformedParams } from "../../shared/mcp-malformed-params.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { ApprovalGate, Proposal } from "../approvals/gate.js";
import type { AuditLog, ToolCallEvent } from "../audit/store.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { wireMessage } from "../http/problem.js";
import type { ApprovalRecord } from "../memory/store.js";
import {
  answerBatch,
  type BatchBudget,
  batchProtocolVersion,
  batchRefusal,
  DEFAULT_BATCH_BUDGET,
  refusesBatches,
  runnableBatch,
} from "./batch.js";
import {
  createLogLevelStore,
  createMcpLog,
  type LogLevelStore,
  logLevelKey,
  type McpLog,
} from "./logging.js";
import { type PromptSpec, registerPrompts } from "./prompts.js";
import { type ResourceSpec, registerResources } from "./resources.js";

export interface ToolContext {
  client: AuthenticatedClient;
  /** The agent session, when the caller names it (header x-ivoai-session-id). */
  sessionId: string | null;
  /** The caller's project scope, when it names one (header x-ivoai-project). */
  project: string | null;
  /** Log messages for the caller (notifications/message), when it set a level and its request streams. */
  log?: McpLog;
  /** The gateway's id of the HTTP request: a failure's answer names it, and the log line carries it. */
  requestId?: string;
}

export interface ToolOutcome<Data extends object = object> {
  status?: ToolStatus;
  data: Data;
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

/** A read tool runs at once; `output` describes its success data exactly (its listed outputSchema). */
export interface ReadToolSpec<
  Shape extends z.ZodRawShape = z.ZodRawShape,
  Output extends z.ZodObject = z.ZodObject,
> extends ToolSpecBase<Shape> {
  tier: "read";
  output: Output;
  run(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<ToolOutcome<z.infer<Output>>>;
}

/** A write or admin tool only proposes: the endpoint files the proposal with the approval gate. */
export interface WriteToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape> extends ToolSpecBase<Shape> {
  tier: Exclude<SecurityTier, "read">;
  propose(args: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<Proposal>;
}

export type ToolSpec<Shape extends z.ZodRawShape = z.ZodRawShape, Output extends z.ZodObject = z.ZodObject> =
  | ReadToolSpec<Shape, Output>
  | WriteToolSpec<Shape>;

/**
 * Keeps a tool's arguments, its output and their shapes tied together while a list holds specs of different
 * shapes: a read tool's run() cannot return data its output schema does not describe. The name must be in the
 * protocol's tool table and the tier and scope must be the table's, or this fails to type-check.
 */
export function defineTool<Name extends ToolName, Shape extends z.ZodRawShape, Output extends z.ZodObject>(
  spec: ToolSpec<Shape, Output> & {
    name: Name;
    tier: ToolTable[Name]["tier"];
    scope: ToolTable[Name]["scope"];
  },
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
  /** Resource templates (documents, pages): listed, read and completed for credentials with their scope. */
  resources?: readonly ResourceSpec[];
  /** MCP prompts, each offered to callers offered the tools it uses. */
  prompts?: readonly PromptSpec[];
  /** Where callers' logging levels are kept between requests (default: one bounded store per endpoint). */
  logLevels?: LogLevelStore;
  /** A read tool slower than this is reported to a caller that set a log level (notice). */
  slowCallMs?: number;
  /** What one JSON-RPC batch may cost under protocol versions before 2025-06-18 (later ones refuse batches). */
  batchBudget?: BatchBudget;
}

export type McpEndpoint = (
  request: Request,
  client: AuthenticatedClient,
  requestId?: string,
) => Promise<Response>;

let validator: AjvJsonSchemaValidator | undefined;
/** The JSON Schema validator every per-request server shares (built on first use). */
function sharedValidator(): AjvJsonSchemaValidator {
  validator ??= new AjvJsonSchemaValidator();
  return validator;
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const maxResultChars = options.maxResultChars ?? 16 * 1024 * 1024;
  const maxInputBytes = options.maxInputBytes ?? 1024 * 1024;
  const logLevels = options.logLevels ?? createLogLevelStore();
  const slowCallMs = options.slowCallMs ?? 2000;
  if (!options.gate && options.tools.some((tool) => tool.tier !== "read")) {
    throw new Error(`MCP endpoint ${options.name} has write tools but no approval gate`);
  }
  /** The tools a scope set may use, by name, built once per distinct set. */
  const offeredByScopes = new Map<string, ReadonlyMap<string, ToolSpec>>();
  /** The tools/list result for each offered set (its JSON text), built once by the SDK itself. */
  const toolLists = new Map<ReadonlyMap<string, ToolSpec>, Promise<string>>();

  return async (request, client, requestId) => {
    const context: ToolContext = {
      client,
      sessionId: headerValue(request, "x-ivoai-session-id"),
      project: headerValue(request, "x-ivoai-project"),
      ...(requestId ? { requestId } : {}),
    };
    const offered = offeredTools(client.scopes);
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE), so only POST (spec 2025-06-18).
    if (request.method !== "POST") return methodNotAllowed();
    if (!acceptsJsonRpcPost(request)) return viaSdk(request, offered, context);
    // The body is read here, once, straight from the socket; the SDK gets it parsed if it answers.
    let message: unknown;
    try {
      message = JSON.parse(await request.text());
    } catch {
      return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
    }
    if (Array.isArray(message)) return batch(request, message, offered, context);
    // A call by a caller that set a log level is answered as SSE by the SDK, its log messages before the result.
    const streamed =
      callsLoggedMethod(message) && logLevels.get(logLevelKey(client.id, context.sessionId)) !== undefined;
    const fast = streamed ? undefined : await answerDirectly(message, offered, context);
    return fast ?? viaSdk(request, offered, context, message, streamed);
  };

  /**
   * A JSON-RPC batch: refused under a protocol version without batching; under an older one its messages run
   * one at a time through the SDK, within the batch budget (the SDK's transport would run them all at once).
   * A batch the transport refuses whole (malformed, too long) goes to it unchanged and runs nothing.
   */
  function batch(
    request: Request,
    items: unknown[],
    offered: ReadonlyMap<string, ToolSpec>,
    context: ToolContext,
  ): Promise<Response> {
    const version = batchProtocolVersion(items, request.headers.get("mcp-protocol-version"));
    if (refusesBatches(version)) return Promise.resolve(batchRefusal(version));
    const messages = runnableBatch(items);
    if (!messages) return viaSdk(request, offered, context, items);
    // Each message is answered as JSON: a batched call gets no log messages streamed before its result.
    const answerOne = (message: unknown) => viaSdk(request, offered, context, message);
    return answerBatch(messages, answerOne, options.batchBudget ?? DEFAULT_BATCH_BUDGET, request.signal);
  }

  function offeredTools(scopes: readonly Scope[]): ReadonlyMap<string, ToolSpec> {
    const key = [...scopes].sort().join(" ");
    let offered = offeredByScopes.get(key);
    if (!offered) {
      // Tools the credential may not use are not offered at all.
      offered = new Map(
        options.tools.filter((tool) => scopes.includes(tool.scope)).map((tool) => [tool.name, tool]),
      );
      offeredByScopes.set(key, offered);
    }
    return offered;
  }

  /**
   * tools/call and tools/list, the requests an agent repeats, answered without a per-request SDK server: the
   * transport's checks (Accept, Content-Type, protocol version) were made by the caller, the message is
   * validated with the SDK's own schemas (the transport's, then the method's), and the list is the SDK's
   * answer, computed once per offered set.
   * Results are the ones the SDK path returns (endpoint.test.ts compares both ways, refusals included).
   * Anything else (initialize, ping, notifications, resources, malformed requests) returns undefined
   * and goes to the SDK, which answers it as it always did.
   */
  async function answerDirectly(
    message: unknown,
    offered: ReadonlyMap<string, ToolSpec>,
    context: ToolContext,
  ): Promise<Response | undefined> {
    // The transport's own check (strict: no extra member, a safe integer or string id, well-formed _meta);
    // what fails it goes to the SDK, which refuses it with its own error.
    const request = JSONRPCRequestSchema.safeParse(message);
    if (!request.success) return undefined;
    const { id, method } = request.data;
    let answer: () => Promise<string>;
    if (method === "tools/list") {
      if (!ListToolsRequestSchema.safeParse(message).success) return undefined;
      answer = () => toolList(offered);
    } else if (method === "tools/call") {
      const parsed = CallToolRequestSchema.safeParse(message);
      if (!parsed.success || parsed.data.params.task !== undefined) return undefined;
      answer = async () => JSON.stringify(await callTool(parsed.data.params, offered, context));
    } else {
      return undefined;
    }
    try {
      return jsonRpcResult(id, await answer());
    } catch (error) {
      options.logger.error("MCP request failed", {
        method,
        error: error instanceof Error ? error.message : String(error),
      });
      // What the SDK does when a handler throws: HTTP 200 and a JSON-RPC error carrying the request's id.
      return jsonRpcHandlerError(id, error);
    }
  }

  function toolList(offered: ReadonlyMap<string, ToolSpec>): Promise<string> {
    let list = toolLists.get(offered);
    if (!list) {
      list = listWithSdk(offered);
      toolLists.set(offered, list);
      // A failure is not cached: the next request tries again.
      list.catch(() => toolLists.delete(offered));
    }
    return list;
  }

  /** Asks an SDK server holding exactly these tools for its tools/list answer, over an in-memory pair. */
  async function listWithSdk(offered: ReadonlyMap<string, ToolSpec>): Promise<string> {
    const server = newServer(offered, {
      client: { id: "", name: "", scopes: [] },
      sessionId: null,
      project: null,
    });
    const [ours, theirs] = InMemoryTransport.createLinkedPair();
    const answer = new Promise<JSONRPCMessage>((resolve) => {
      ours.onmessage = resolve;
    });
    await server.connect(theirs);
    await ours.start();
    await ours.send({ jsonrpc: "2.0", id: 0, method: "tools/list" });
    const reply = await answer;
    await server.close();
    if ("result" in reply) return JSON.stringify(reply.result);
    // The SDK's own error (code, message, data), answered to the caller as the SDK would have.
    throw "error" in reply
      ? Object.assign(new Error(reply.error.message), reply.error)
      : new Error(`${options.name}: tools/list failed: ${JSON.stringify(reply)}`);
  }

  /** The SDK's stateless path: one server and transport for this request. */
  async function viaSdk(
    request: Request,
    offered: ReadonlyMap<string, ToolSpec>,
    context: ToolContext,
    parsedBody?: unknown,
    streamed = false,
  ): Promise<Response> {
    const server = newServer(offered, context);
    // Stateless: no session id option at all, one server + transport per HTTP request.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !streamed });
    await server.connect(transport);
    let response: Response;
    try {
      response = await transport.handleRequest(request, {
        authInfo: { token: "", clientId: context.client.id, scopes: [...context.client.scopes] },
        ...(parsedBody === undefined ? {} : { parsedBody }),
      });
    } catch (error) {
      void server.close();
      throw error;
    }
    // Only a call answered as a stream keeps its server: anything else (a JSON answer, a refusal) ends with
    // this request, as it always did.
    if (!streamed || !response.body || response.headers.get("content-type") !== "text/event-stream") {
      void server.close();
      return response;
    }
    // A streamed call is written after this returns: the server closes when its stream ends or the caller leaves.
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = await reader.read();
        if (!chunk.done) return controller.enqueue(chunk.value);
        controller.close();
        void server.close();
      },
      cancel(reason) {
        void server.close();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  }

  function newServer(offered: ReadonlyMap<string, ToolSpec>, context: ToolContext): McpServer {
    const server = new McpServer(
      { name: options.name, version: IVOAI_VERSION },
      {
        instructions: options.instructions,
        // logging/setLevel is installed by the SDK only when the constructor is given the capability.
        capabilities: { tools: { listChanged: false }, logging: {}, ...options.capabilities },
        // One validator for every request: the SDK's default builds a new Ajv (all its vocabularies) per server.
        jsonSchemaValidator: sharedValidator(),
      },
    );
    options.extend?.(server);
    if (options.prompts) registerPrompts(server, options.prompts, new Set(offered.keys()), options.logger);
    // The level outlives this per-request server: it is kept for the caller (credential and agent session).
    server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      logLevels.set(logLevelKey(context.client.id, context.sessionId), request.params.level);
      return {};
    });
    for (const tool of offered.values()) {
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input,
          outputSchema: outputSchema(tool),
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
    server.server.setRequestHandler(CallToolRequestSchema, (call, extra) =>
      callTool(call.params, offered, withLog(context, extra.sendNotification)),
    );
    if (options.resources) {
      registerResources(server, {
        endpoint: options.name,
        all: options.resources,
        offered: options.resources.filter((spec) => context.client.scopes.includes(spec.scope)),
        context,
        maxResultChars,
        record,
        logger: options.logger,
      });
    }
    // registerTool declares tools.listChanged true; a stateless endpoint has no stream to send the notification on.
    server.server.registerCapabilities({ tools: { listChanged: false } });
    answerMalformedParams(server.server);
    return server;
  }

  /** The context with a log for this request, when the caller set a level. */
  function withLog(context: ToolContext, send: Parameters<typeof createMcpLog>[1]): ToolContext {
    const level = logLevels.get(logLevelKey(context.client.id, context.sessionId));
    return level === undefined ? context : { ...context, log: createMcpLog(level, send) };
  }

  async function callTool(
    params: CallToolRequest["params"],
    offered: ReadonlyMap<string, ToolSpec>,
    context: ToolContext,
  ): Promise<CallToolResult> {
    const name = params.name;
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
    const parsed = await inputSchema(tool).safeParseAsync(params.arguments ?? {});
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
  }

  /** A call refused before its tool ran: an error result, audited with status REJECTED. */
  async function reject(
    name: string,
    tool: ToolSpec | undefined,
    reason: "unknown_tool" | "insufficient_scope" | "invalid_arguments",
    message: string,
    context: ToolContext,
  ): Promise<CallToolResult> {
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
    await context.log?.("warning", {
      message: `Refused by the guardrail (${reason})`,
      tool: name.slice(0, 128),
      reason,
    });
    return { content: [{ type: "text", text: message }], isError: true };
  }

  function record(event: ToolCallEvent): void {
    // A failed write cannot fail the agent's call: the audit log writes after it and reports failures itself.
    void options.audit?.record(event);
    // The audit log is the record of calls (the HTTP request line says one happened): the log repeats it at
    // debug level only, or at info when this endpoint has no audit log.
    if (options.audit) options.logger.debug("tool call", { ...event });
    else options.logger.info("tool call", { ...event });
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
        await context.log?.("warning", { message: `Refused by the guardrail: ${refusal}`, tool: tool.name });
      } else if (tool.tier === "read") {
        outcome = await tool.run(args as never, context);
        if (outcome.text.length > maxResultChars) {
          await context.log?.("warning", {
            message: "The result is too large to return",
            tool: tool.name,
            chars: outcome.text.length,
            limit_chars: maxResultChars,
          });
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
        await context.log?.("info", {
          message: "Change proposed: it waits for a person's approval",
          tool: tool.name,
          approval_id: approval.id,
          scope: approval.scope,
          path: approval.path,
          poll_with: "memory_approval_status",
        });
      }
    } catch (error) {
      isError = true;
      // The wire's one policy: the caller's own errors cross with their message; the server's own failures
      // (a store down, an unsafe path) answer a fixed text naming the request, and their details are logged.
      const failure = wireMessage(error);
      let message = failure.message;
      if (failure.internal) {
        options.logger.error("tool failed", {
          tool: tool.name,
          error_code: failure.code,
          ...(context.requestId ? { request_id: context.requestId } : {}),
          error: error instanceof Error ? error.message : String(error),
        });
        if (context.requestId) message = `${message} (request ${context.requestId})`;
      }
      outcome = { status: "FAILED", data: { error: message }, text: `Error: ${message}` };
      await context.log?.("error", { message: `The tool failed: ${message}`, tool: tool.name });
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
    if (context.log) await logCall(context.log, tool, envelope);
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

  /** What the caller may want to know of a finished call: a slow read, and (debug) every call's outcome. */
  async function logCall(log: McpLog, tool: ToolSpec, envelope: ToolEnvelope): Promise<void> {
    const { latency_ms, tokens_consumed } = envelope.telemetry;
    if (tool.tier === "read" && latency_ms >= slowCallMs) {
      await log("notice", {
        message: `${tool.name} was slow (${latency_ms} ms)`,
        tool: tool.name,
        latency_ms,
      });
    }
    await log("debug", {
      message: "tool call",
      tool: tool.name,
      status: envelope.status,
      latency_ms,
      tokens_consumed,
    });
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

/** Requests whose handling may send log messages (the rest are answered as JSON whatever the level). */
const LOGGED_METHODS: ReadonlySet<unknown> = new Set(["tools/call", "resources/read"]);

function callsLoggedMethod(message: unknown): boolean {
  return (
    typeof message === "object" &&
    message !== null &&
    LOGGED_METHODS.has((message as { method?: unknown }).method)
  );
}

function headerValue(request: Request, name: string): string | null {
  const value = request.headers.get(name)?.trim();
  return value && SESSION_ID_PATTERN.test(value) ? value : null;
}

const outputSchemas = new WeakMap<ToolSpec, z.ZodObject>();
/** A tool's listed output: the envelope with its data described exactly, built once per tool. */
function outputSchema(tool: ToolSpec): z.ZodObject {
  let schema = outputSchemas.get(tool);
  if (!schema) {
    schema = tool.tier === "read" ? toolEnvelopeSchema("read", tool.output) : toolEnvelopeSchema(tool.tier);
    outputSchemas.set(tool, schema);
  }
  return schema;
}

const inputSchemas = new WeakMap<ToolSpec, z.ZodObject<z.ZodRawShape>>();
/** A tool's input schema as one zod object, built once per tool. */
function inputSchema(tool: ToolSpec): z.ZodObject<z.ZodRawShape> {
  let schema = inputSchemas.get(tool);
  if (!schema) {
    schema = z.object(tool.input);
    inputSchemas.set(tool, schema);
  }
  return schema;
}

/** The checks the SDK's transport makes on every POST before it reads the body (Streamable HTTP). */
function acceptsJsonRpcPost(request: Request): boolean {
  const accept = request.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return false;
  if (!isJsonContentType(request.headers.get("content-type"))) return false;
  const version = request.headers.get("mcp-protocol-version");
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

function jsonRpcResult(id: string | number, resultJson: string): Response {
  return new Response(`{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`, {
    status: 200,
    headers: { "Content-Type": "application/json" },
  });
}

/** A request handler's failure, answered as the SDK's protocol layer answers it (code -32603 unless given). */
function jsonRpcHandlerError(id: string | number, error: unknown): Response {
  const { code, message, data } = (typeof error === "object" && error !== null ? error : {}) as {
    code?: unknown;
    message?: unknown;
    data?: unknown;
  };
  const body = {
    jsonrpc: "2.0",
    id,
    error: {
      code: Number.isSafeInteger(code) ? code : -32603,
      message: message ?? "Internal error",
      ...(data === undefined ? {} : { data }),
    },
  };
  return new Response(JSON.stringify(body), { status: 200, headers: { "Content-Type": "application/json" } });
}

/** Any method but POST: there is no stream to open (GET) and no session to end (DELETE) on a stateless endpoint. */
function methodNotAllowed(): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }),
    { status: 405, headers: { Allow: "POST", "Content-Type": "application/json" } },
  );
}

/** The transport's own error answer (same status, code and message as the SDK would give). */
function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}
