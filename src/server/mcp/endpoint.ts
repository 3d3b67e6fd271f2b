// One Streamable HTTP MCP endpoint over a list of tool specs (stateless, JSON responses): it only chooses who
// answers a request. tools/call and tools/list, what agents repeat, go to the fast path (fast-path.ts); the rest,
// and a call whose caller set a log level (answered as SSE), to the official SDK (sdk-path.ts). Every call passes
// the guardrail and returns seed 004's envelope beside a text rendering (tool-call.ts).
import type { AuthenticatedClient } from "../enrollment/service.js";
import { answerBatch, batchProtocolVersion, batchRefusal, refusesBatches, runnableBatch } from "./batch.js";
import {
  createEndpointState,
  type EndpointState,
  type McpEndpointOptions,
  type OfferedTools,
  offeredTools,
  toolContext,
} from "./endpoint-state.js";
import { answerDirectly } from "./fast-path.js";
import { acceptsJsonRpcPost, jsonRpcError, methodNotAllowed } from "./jsonrpc-answers.js";
import { logLevelKey } from "./logging.js";
import { viaSdk } from "./sdk-path.js";
import type { ToolContext } from "./tool-spec.js";

export type { McpEndpointOptions } from "./endpoint-state.js";
export {
  defineTool,
  type ReadToolSpec,
  type ToolContext,
  type ToolOutcome,
  type ToolSpec,
  type WriteToolSpec,
} from "./tool-spec.js";

export type McpEndpoint = (
  request: Request,
  client: AuthenticatedClient,
  requestId?: string,
) => Promise<Response>;

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const state = createEndpointState(options);
  return (request, client, requestId) => answer(state, request, client, requestId);
}

async function answer(
  state: EndpointState,
  request: Request,
  client: AuthenticatedClient,
  requestId: string | undefined,
): Promise<Response> {
  const context = toolContext(request, client, requestId);
  const offered = offeredTools(state, client.scopes);
  // Stateless: no server-initiated stream (GET) and no session to end (DELETE), so only POST (spec 2025-06-18).
  if (request.method !== "POST") return methodNotAllowed();
  if (!acceptsJsonRpcPost(request)) return viaSdk(state, request, offered, context);
  // The body is read here, once, straight from the socket; the SDK gets it parsed if it answers.
  let message: unknown;
  try {
    message = JSON.parse(await request.text());
  } catch {
    return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
  }
  if (Array.isArray(message)) return batch(state, request, message, offered, context);
  // A call by a caller that set a log level is answered as SSE by the SDK, its log messages before the result.
  const streamed =
    callsLoggedMethod(message) &&
    state.logLevels.get(logLevelKey(client.id, context.sessionId)) !== undefined;
  const fast =
    streamed || !state.fastPath ? undefined : await answerDirectly(state, message, offered, context);
  return fast ?? viaSdk(state, request, offered, context, message, streamed);
}

/**
 * A JSON-RPC batch: refused under a protocol version without batching; under an older one its messages run
 * one at a time through the SDK, within the batch budget (the SDK's transport would run them all at once).
 * A batch the transport refuses whole (malformed, too long) goes to it unchanged and runs nothing.
 */
function batch(
  state: EndpointState,
  request: Request,
  items: unknown[],
  offered: OfferedTools,
  context: ToolContext,
): Promise<Response> {
  const version = batchProtocolVersion(items, request.headers.get("mcp-protocol-version"));
  if (refusesBatches(version)) return Promise.resolve(batchRefusal(version));
  const messages = runnableBatch(items);
  if (!messages) return viaSdk(state, request, offered, context, items);
  // Each message is answered as JSON: a batched call gets no log messages streamed before its result.
  const answerOne = (message: unknown) => viaSdk(state, request, offered, context, message);
  return answerBatch(messages, answerOne, state.batchBudget, request.signal);
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
