// The SDK's stateless path of an MCP endpoint: one McpServer and Streamable HTTP transport per request, holding
// the tools, prompts and resources the caller is offered. Everything the fast path does not answer comes here.
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type JSONRPCMessage,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { answerMalformedParams } from "../../shared/mcp-malformed-params.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { EndpointState, OfferedTools } from "./endpoint-state.js";
import { logLevelKey } from "./logging.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { callTool, invoke, record, withLog } from "./tool-call.js";
import { outputSchema, type ToolContext } from "./tool-spec.js";
import { answerFailuresByPolicy } from "./wire-error.js";

/** A JSON-RPC error an SDK server answered (its handlers follow the wire's error policy): passed on unchanged. */
export class SdkErrorAnswer extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(error: { code: number; message: string; data?: unknown }) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

let validator: AjvJsonSchemaValidator | undefined;
/** The JSON Schema validator every per-request server shares (built on first use). */
function sharedValidator(): AjvJsonSchemaValidator {
  validator ??= new AjvJsonSchemaValidator();
  return validator;
}

/** Answers one HTTP request with a server and transport of its own (stateless: no session id at all). */
export async function viaSdk(
  state: EndpointState,
  request: Request,
  offered: OfferedTools,
  context: ToolContext,
  parsedBody?: unknown,
  streamed = false,
): Promise<Response> {
  const server = newServer(state, offered, context);
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
  // this request.
  if (!streamed || !response.body || response.headers.get("content-type") !== "text/event-stream") {
    void server.close();
    return response;
  }
  return closingWithStream(response, response.body, server);
}

/** A streamed call is written after viaSdk returns: the server closes when its stream ends or the caller leaves. */
function closingWithStream(
  response: Response,
  stream: ReadableStream<Uint8Array>,
  server: McpServer,
): Response {
  const reader = stream.getReader();
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

/**
 * Asks an SDK server holding exactly these tools for its tools/list answer, over an in-memory pair. A failure
 * names `requestId`, the request that asked (a failed list is not kept, so it is that request's).
 */
export async function listWithSdk(
  state: EndpointState,
  offered: OfferedTools,
  requestId: string | undefined,
): Promise<string> {
  const context = { client: { id: "", name: "", scopes: [] }, sessionId: null, project: null };
  const server = newServer(state, offered, requestId ? { ...context, requestId } : context);
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
    ? new SdkErrorAnswer(reply.error)
    : new Error(`${state.options.name}: tools/list failed: ${JSON.stringify(reply)}`);
}

/** One request's server: the offered tools, prompts and resources, the level store, and the error policy. */
function newServer(state: EndpointState, offered: OfferedTools, context: ToolContext): McpServer {
  const { options } = state;
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
  if (options.prompts)
    registerPrompts(server, options.prompts, new Set(offered.keys()), options.logger, context.requestId);
  // The level outlives this per-request server: it is kept for the caller (credential and agent session).
  server.server.setRequestHandler(SetLevelRequestSchema, (request) => {
    state.logLevels.set(logLevelKey(context.client.id, context.sessionId), request.params.level);
    return {};
  });
  registerTools(state, server, offered, context);
  if (options.resources) {
    registerResources(server, {
      endpoint: options.name,
      all: options.resources,
      offered: options.resources.filter((spec) => context.client.scopes.includes(spec.scope)),
      context,
      maxResultChars: state.maxResultChars,
      record: (event) => record(state, event),
      logger: options.logger,
    });
  }
  // registerTool declares tools.listChanged true; a stateless endpoint has no stream to send the notification on.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  answerMalformedParams(server.server);
  answerFailuresByPolicy(server.server, options.logger, context.requestId);
  return server;
}

function registerTools(state: EndpointState, server: McpServer, offered: OfferedTools, context: ToolContext) {
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
      async (args: Record<string, unknown>) => invoke(state, tool, args, context),
    );
  }
  // tools/call is answered here rather than by McpServer, so that a call refused before any tool runs
  // (unknown tool, arguments failing the schema) is audited too; the answers match the SDK's.
  server.server.setRequestHandler(CallToolRequestSchema, (call, extra) =>
    callTool(state, call.params, offered, withLog(state, context, extra.sendNotification)),
  );
}
