// Malformed request params answered as the spec's -32602, not -32603: the SDK parses a request's params inside
// the handler it installs and lets the ZodError out as an internal error, with zod's whole dump for a message.
// Shared by the gateway's MCP endpoints and the session router, whose servers both answer through the SDK.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { requestHandlers } from "./mcp-sdk-handlers.js";

/** A message that says what was wrong in a line, bounded (the params are the caller's). */
function summary(issues: readonly { path?: readonly PropertyKey[]; message?: string }[]): string {
  const text = issues
    .slice(0, 5)
    .map((issue) => `${(issue.path ?? []).map(String).join(".") || "params"}: ${issue.message ?? "invalid"}`)
    .join("; ");
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function isZodError(error: unknown): error is { issues: { path?: PropertyKey[]; message?: string }[] } {
  return (
    typeof error === "object" &&
    error !== null &&
    // zod's classic API names it ZodError, its core (which the SDK parses with) $ZodError.
    /^\$?ZodError$/.test(String((error as { name?: unknown }).name)) &&
    Array.isArray((error as { issues?: unknown }).issues)
  );
}

/**
 * Wraps every request handler installed on `server` so far: the SDK's params parse throws synchronously, before
 * any handler runs, so a ZodError thrown synchronously is the caller's malformed request (-32602). Errors of the
 * handlers themselves (asynchronous) pass unchanged. Call it after the last handler is set.
 */
export function answerMalformedParams(server: Server): void {
  const handlers = requestHandlers(server);
  if (!handlers) return;
  for (const [method, handler] of handlers) {
    handlers.set(method, (request, extra) => {
      try {
        return handler(request, extra);
      } catch (error) {
        if (!isZodError(error)) throw error;
        return Promise.reject(
          new McpError(ErrorCode.InvalidParams, `Invalid params: ${summary(error.issues)}`),
        );
      }
    });
  }
}
