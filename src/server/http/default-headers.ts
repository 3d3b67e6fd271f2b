// The headers every gateway response carries, set without copying the response.
import type { Context } from "hono";
import type { GatewayEnv } from "./env.js";

/**
 * Adds `Cache-Control: no-store` (unless the route set its own caching) and `X-Content-Type-Options: nosniff`
 * to the finished response. They are set on the response's own headers: Hono's `c.header()` after `next()`
 * rebuilds the response around a stream of its body, which @hono/node-server then writes chunk by chunk
 * instead of in one write. Headers a runtime made immutable (Response.redirect) take the copying way.
 */
export function setDefaultHeaders(c: Context<GatewayEnv>): void {
  const headers = c.res.headers;
  try {
    if (!headers.has("Cache-Control")) headers.set("Cache-Control", "no-store");
    headers.set("X-Content-Type-Options", "nosniff");
  } catch {
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
  }
}
