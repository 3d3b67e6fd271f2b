// What the OAuth endpoints answer on the wire: RFC 6749 error JSON, the open endpoints' per-address budget, and a
// thrown error through the gateway's one wire policy (an internal failure never leaks its details).
import type { Context } from "hono";
import type { RateLimiter } from "../enrollment/rate-limit.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import type { WireFailure } from "../http/wire-failure.js";

/** The protected resource (RFC 8707) every Web MCP token is for. */
export const mcpResource = (issuer: string) => `${issuer}/mcp`;

/** An RFC 6749 error body. */
export const oauthError = (error: string, description: string) => ({ error, error_description: description });

/**
 * A thrown error as RFC 6749 error JSON: the caller's own error as invalid_request with its message; the server's
 * own failure as server_error (temporarily_unavailable when it is a 503) with the generic text naming the request.
 */
export function renderOAuthFailure(c: Context<GatewayEnv>, failure: WireFailure): Response {
  const error = !failure.internal
    ? "invalid_request"
    : failure.status === 503
      ? "temporarily_unavailable"
      : "server_error";
  return c.json(oauthError(error, failure.message), failure.status);
}

/** The open endpoints' budget per client address (registration and authorization pages): they cannot fill the disk. */
export function limitPerSource(limiter: RateLimiter, c: Context<GatewayEnv>): Response | undefined {
  const budget = limiter.hit(clientAddress(c));
  if (budget.allowed) return undefined;
  c.header("Retry-After", String(budget.retryAfterSeconds));
  return c.json(oauthError("slow_down", "too many requests; try again later"), 429);
}
