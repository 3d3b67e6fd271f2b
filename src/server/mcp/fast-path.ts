// The fast path of an MCP endpoint: tools/call and tools/list, the requests an agent repeats, answered without a
// per-request SDK server. The transport's checks (Accept, Content-Type, protocol version) were made by the
// caller, the message is validated with the SDK's own schemas (the transport's, then the method's), and the list
// is the SDK's answer, computed once per offered set. Answers are the ones the SDK path returns
// (endpoint.test.ts sends each request both ways, refusals and failures included).
import {
  CallToolRequestSchema,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { EndpointState, OfferedTools } from "./endpoint-state.js";
import { jsonRpcHandlerError, jsonRpcResult } from "./jsonrpc-answers.js";
import { listWithSdk, SdkErrorAnswer } from "./sdk-path.js";
import { callTool } from "./tool-call.js";
import type { ToolContext } from "./tool-spec.js";
import { mcpErrorFor } from "./wire-error.js";

/**
 * The answer to one parsed message, or undefined for anything else (initialize, ping, notifications, resources,
 * a task-augmented call, a message failing the SDK's schemas): the SDK answers those as it always did.
 */
export async function answerDirectly(
  state: EndpointState,
  message: unknown,
  offered: OfferedTools,
  context: ToolContext,
): Promise<Response | undefined> {
  // The transport's own check (strict: no extra member, a safe integer or string id, well-formed _meta);
  // what fails it goes to the SDK, which refuses it with its own error.
  const request = JSONRPCRequestSchema.safeParse(message);
  if (!request.success) return undefined;
  const answer = directAnswer(state, message, request.data.method, offered, context);
  if (!answer) return undefined;
  const { id, method } = request.data;
  try {
    return jsonRpcResult(id, await answer());
  } catch (error) {
    // What the SDK path does when a handler throws: HTTP 200 and a JSON-RPC error carrying the request's id,
    // its text by the wire's error policy (an SDK server's own answer already follows it).
    const wire =
      error instanceof SdkErrorAnswer
        ? error
        : mcpErrorFor(error, {
            logger: state.options.logger,
            requestId: context.requestId,
            msg: "MCP request failed",
            fields: { method },
          });
    return jsonRpcHandlerError(id, wire);
  }
}

/** How to compute the result's JSON for a message this path answers, or undefined when it does not. */
function directAnswer(
  state: EndpointState,
  message: unknown,
  method: string,
  offered: OfferedTools,
  context: ToolContext,
): (() => Promise<string>) | undefined {
  if (method === "tools/list") {
    if (!ListToolsRequestSchema.safeParse(message).success) return undefined;
    return () => toolList(state, offered, context.requestId);
  }
  if (method === "tools/call") {
    const parsed = CallToolRequestSchema.safeParse(message);
    if (!parsed.success || parsed.data.params.task !== undefined) return undefined;
    return async () => JSON.stringify(await callTool(state, parsed.data.params, offered, context));
  }
  return undefined;
}

/** The offered set's tools/list result, asked of the SDK once and kept (a failure is not kept). */
function toolList(
  state: EndpointState,
  offered: OfferedTools,
  requestId: string | undefined,
): Promise<string> {
  let list = state.toolLists.get(offered);
  if (!list) {
    list = listWithSdk(state, offered, requestId);
    state.toolLists.set(offered, list);
    // A failure is not cached: the next request tries again.
    list.catch(() => state.toolLists.delete(offered));
  }
  return list;
}
