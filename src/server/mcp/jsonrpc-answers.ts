// The HTTP answers an MCP endpoint writes itself, each as the SDK's Streamable HTTP transport writes it.
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/** The checks the SDK's transport makes on every POST before it reads the body (Streamable HTTP). */
export function acceptsJsonRpcPost(request: Request): boolean {
  const accept = request.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) return false;
  if (!isJsonContentType(request.headers.get("content-type"))) return false;
  const version = request.headers.get("mcp-protocol-version");
  return version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version);
}

export function jsonRpcResult(id: string | number, resultJson: string): Response {
  return new Response(`{"result":${resultJson},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`, {
    status: 200,
    headers: { "Content-Type": "application/json" },
  });
}

/** A request handler's failure, answered as the SDK's protocol layer answers it (code -32603 unless given). */
export function jsonRpcHandlerError(id: string | number, error: unknown): Response {
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
export function methodNotAllowed(): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }),
    { status: 405, headers: { Allow: "POST", "Content-Type": "application/json" } },
  );
}

/** The transport's own error answer (same status, code and message as the SDK would give). */
export function jsonRpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}
