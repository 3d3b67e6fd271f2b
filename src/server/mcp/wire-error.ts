// The one error policy of the MCP wire, the HTTP surfaces' (wireFailure over wireMessage): a caller's own errors
// cross with their message; the server's own failures (a store down, an unsafe path, an unexpected exception)
// answer a fixed text naming the request, and their details go to the log with error_code and request_id.
// Tools, resources, prompts and every other handler of an endpoint's server answer through here.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../shared/logger.js";
import { requestHandlers } from "../../shared/mcp-sdk-handlers.js";
import { wireFailure } from "../http/wire-failure.js";

/** Where a failure is reported: the log line's message and fields, and the request the answer names. */
export interface FailureReport {
  logger: Logger;
  requestId?: string | undefined;
  /** The log line's message, e.g. "tool failed". */
  msg: string;
  /** Fields saying what failed (tool, uri, method); never the error's own text, which `error` carries. */
  fields?: Record<string, unknown>;
}

/**
 * What a caller may read of a failure (the HTTP surfaces' wireFailure, so the text and its request id are
 * written in one place), and whether it was the server's own: then it is logged here, never sent.
 */
export function publicFailure(error: unknown, report: FailureReport): { text: string; internal: boolean } {
  const failure = wireFailure(error, report.requestId);
  if (failure.internal) {
    report.logger.error(report.msg, {
      ...report.fields,
      // Not `code`: the logger redacts a field of that name (a sign-in code's).
      error_code: failure.code,
      ...(report.requestId ? { request_id: report.requestId } : {}),
      error: error instanceof Error ? error.message : String(error),
    });
  }
  return { text: failure.message, internal: failure.internal };
}

/**
 * A handler's failure as its JSON-RPC error: an McpError is a protocol answer the handler chose and passes
 * unchanged; anything else follows publicFailure, a caller's own error as invalid params (-32602), the server's
 * own as an internal error (-32603).
 */
export function mcpErrorFor(error: unknown, report: FailureReport): McpError {
  if (error instanceof McpError) return error;
  const { text, internal } = publicFailure(error, report);
  return new McpError(internal ? ErrorCode.InternalError : ErrorCode.InvalidParams, text);
}

/**
 * Wraps every request handler installed on `server` so far (the SDK's own included: prompts/get, tools/list,
 * a fixed resource's read, extension methods) so that its failures, thrown or rejected, follow mcpErrorFor.
 * Install it after answerMalformedParams, which has by then turned the SDK's parse of malformed params into
 * invalid params (an McpError, passed unchanged); call it after the last handler is set.
 */
export function answerFailuresByPolicy(server: Server, logger: Logger, requestId: string | undefined): void {
  const handlers = requestHandlers(server);
  if (!handlers) return;
  for (const [method, handler] of handlers) {
    const answer = (error: unknown): never => {
      throw mcpErrorFor(error, { logger, requestId, msg: "MCP request failed", fields: { method } });
    };
    // Some of the SDK's handlers throw before they return a promise (tools/list building its schemas).
    handlers.set(method, async (request, extra) => {
      try {
        return await handler(request, extra);
      } catch (error) {
        return answer(error);
      }
    });
  }
}
