// The router's HTTP side: origin and capability checks, then an MCP endpoint (passed through to its one
// source, or answered by the router's own server) or the memory lifecycle hook.
import type http from "node:http";
import { endpointUrl } from "../../config/client-config.js";
import { readBody, sendJson } from "../../shared/http-json.js";
import { checkOrigin } from "../../shared/origin-policy.js";
import { forward } from "./forward.js";
import { answerWithOwnServer } from "./own-server.js";
import {
  type Access,
  accessOf,
  groupsFor,
  HOOK_TIMEOUT_MS,
  MAX_HOOK_RESPONSE_BYTES,
  MAX_REQUEST_BYTES,
  type RouterState,
} from "./router-state.js";
import type { Source, SourceGroup } from "./selection.js";
import type { EndpointName } from "./upstream.js";
import { answerUserServer, USER_ROUTE, userServerVisible } from "./user-endpoint.js";

/** Request headers an MCP exchange needs, forwarded as they are on a pass-through. */
const PASSED_HEADERS = ["content-type", "accept", "mcp-protocol-version", "mcp-session-id", "last-event-id"];

/** The endpoint a path names, if it is one of the two MCP endpoints. */
export function endpointOfRoute(route: string | undefined): EndpointName | undefined {
  return route === "/mcp/context" ? "context" : route === "/mcp/memory" ? "memory" : undefined;
}

/** The node:http listener: a failure before the answer started is a 500 in one line, else the socket drops. */
export function listener(state: RouterState) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    handleRequest(state, req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { error: "internal_error", message: (error as Error).message.split("\n")[0] });
      else res.destroy();
    });
  };
}

/** One agent request: origin, capability and size checks, then the route. */
export async function handleRequest(
  state: RouterState,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  // DNS-rebinding protection: only this loopback listener's own host names, no foreign browser origin.
  const verdict = checkOrigin(
    { host: req.headers.host, origin: req.headers.origin },
    { publicOrigin: `http://127.0.0.1:${state.port}`, loopback: { port: state.port } },
  );
  if (!verdict.ok) return sendJson(res, 403, { error: verdict.error, message: verdict.message });
  const access = accessOf(state, req.headers.authorization, Date.now());
  if (!access) {
    return sendJson(res, 401, { error: "unauthorized", message: "a valid session capability is required" });
  }
  const body = await readBody(req, MAX_REQUEST_BYTES);
  if (!body) return sendJson(res, 413, { error: "payload_too_large" });
  const route = (req.url ?? "").split("?")[0];
  const endpoint = endpointOfRoute(route);
  if (endpoint) return handleMcp(state, endpoint, req, body, res, access);
  const user = USER_ROUTE.exec(route ?? "")?.[1];
  if (user !== undefined) return handleUserMcp(state, user, req, body, res, access);
  if (route === "/hooks/memory" && req.method === "POST") return postHook(state, body, res, access);
  sendJson(res, 404, { error: "not_found" });
}

async function handleMcp(
  state: RouterState,
  endpoint: EndpointName,
  req: http.IncomingMessage,
  body: Buffer,
  res: http.ServerResponse,
  access: Access,
): Promise<void> {
  const all = groupsFor(state.sources, endpoint).flatMap((group) => group.members);
  if (req.method === "GET") {
    // Answers are buffered whole (pass-through and the router's own server alike), so there is no
    // standalone SSE stream (allowed by the spec); upstream log messages ride on POST answers instead.
    return sendJson(res, 405, { error: "method_not_allowed", message: "no server-initiated stream here" });
  }
  // A read-only capability never passes through: every call is checked by the router's own MCP server.
  if (all.length === 1 && access === "full") {
    const source = all[0] as Source;
    return passThrough(state, source, endpointUrl(source.profile, endpoint), req, body, res);
  }
  const response = await answerWithOwnServer(state, endpoint, toWebRequest(req, body), access);
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), "cache-control": "no-store" });
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** `/mcp/user/NAME`: a server the capability may not reach is as absent as one that does not exist. */
async function handleUserMcp(
  state: RouterState,
  name: string,
  req: http.IncomingMessage,
  body: Buffer,
  res: http.ServerResponse,
  access: Access,
): Promise<void> {
  const server = state.users.servers.find((entry) => entry.name === name);
  if (!server || !userServerVisible(server, access)) return sendJson(res, 404, { error: "not_found" });
  if (req.method === "GET") {
    return sendJson(res, 405, { error: "method_not_allowed", message: "no server-initiated stream here" });
  }
  const response = await answerUserServer(state.users, server, toWebRequest(req, body));
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), "cache-control": "no-store" });
  res.end(Buffer.from(await response.arrayBuffer()));
}

/** The node:http request as a web `Request` for the SDK's transport (string headers only). */
function toWebRequest(req: http.IncomingMessage, body: Buffer): Request {
  return new Request(`http://127.0.0.1${req.url}`, {
    method: req.method ?? "POST",
    headers: Object.entries(req.headers).flatMap(([name, value]) =>
      typeof value === "string" ? [[name, value] as [string, string]] : [],
    ),
    ...(req.method === "POST" ? { body } : {}),
  });
}

/**
 * Single-source endpoint: the HTTP exchange is forwarded as it is, so its answer passes through unchanged,
 * with the upstream credential in place of the session capability, under the same limits.
 */
async function passThrough(
  state: RouterState,
  source: Source,
  url: string,
  req: http.IncomingMessage,
  body: Buffer,
  res: http.ServerResponse,
): Promise<void> {
  const forwarded: Record<string, string> = { ...state.headers, authorization: `Bearer ${source.token}` };
  for (const name of PASSED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") forwarded[name] = value;
  }
  try {
    // The URL comes from the profile itself, so the credential can only go to that origin.
    const response = await forward({
      url,
      method: req.method ?? "POST",
      headers: forwarded,
      ...(req.method === "POST" ? { body } : {}),
      timeoutMs: state.limits.deadlineMs,
      maxResponseBytes: state.limits.maxResponseBytes,
    });
    res.writeHead(response.status, { ...response.headers, "cache-control": "no-store" }).end(response.body);
  } catch (error) {
    sendJson(res, 502, { error: "upstream_failed", message: (error as Error).message });
  }
}

/** Lifecycle hooks: observations for the one memory destination, bounded in time, never retried. */
async function postHook(
  state: RouterState,
  body: Buffer,
  res: http.ServerResponse,
  access: Access,
): Promise<void> {
  if (access !== "full") {
    return sendJson(res, 403, { error: "read_only", message: "a read-only capability may not post hooks" });
  }
  const groups = groupsFor(state.sources, "memory");
  if (groups.length !== 1) {
    return sendJson(res, 409, {
      error: "write_destination_ambiguous",
      message: "WRITE_DESTINATION=AMBIGUOUS",
    });
  }
  const primary = (groups[0] as SourceGroup).members[0] as Source;
  try {
    const response = await forward({
      url: endpointUrl(primary.profile, "hooks"),
      method: "POST",
      headers: {
        ...state.headers,
        "content-type": "application/json",
        authorization: `Bearer ${primary.token}`,
      },
      body,
      timeoutMs: HOOK_TIMEOUT_MS,
      maxResponseBytes: MAX_HOOK_RESPONSE_BYTES,
    });
    res.writeHead(response.status, { "content-type": "application/json" }).end(response.body);
  } catch (error) {
    sendJson(res, 502, { error: "upstream_failed", message: (error as Error).message });
  }
}
