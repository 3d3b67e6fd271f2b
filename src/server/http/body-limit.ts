// Request body size limit that decides from Content-Length alone whenever it can.
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit as streamedBodyLimit } from "hono/body-limit";
import type { GatewayEnv } from "./env.js";

export interface BodyLimitOptions {
  maxSize: number;
  onError(c: Context<GatewayEnv>): Response | Promise<Response>;
}

/**
 * Hono's bodyLimit, minus its first step: it reads `c.req.raw.body` on every request, which makes
 * @hono/node-server build a full web Request (a ReadableStream over the socket, an AbortController) where
 * `text()` would otherwise read the socket directly. A declared length is checked as Hono checks it; only a
 * body without one (chunked) is counted while streamed, by Hono's own middleware.
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler<GatewayEnv> {
  const streamed = streamedBodyLimit(options);
  return (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const length = c.req.header("content-length");
    if (length !== undefined && c.req.header("transfer-encoding") === undefined) {
      return Number.parseInt(length, 10) > options.maxSize ? Promise.resolve(options.onError(c)) : next();
    }
    return streamed(c, next);
  };
}
