// Gives every request its id and logs it once answered (with the default headers set on the way out).
import type { MiddlewareHandler } from "hono";
import type { Logger } from "../../shared/logger.js";
import { newId } from "../../shared/tokens.js";
import { setDefaultHeaders } from "./default-headers.js";
import { clientAddress, type GatewayEnv } from "./env.js";

export function requestLog(logger: Logger): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const started = performance.now();
    c.set("requestId", newId("req_"));
    await next();
    // The console's static files set their own caching; everything else is never stored.
    setDefaultHeaders(c);
    // Path only: a query string may carry a token a client should never have sent.
    logger.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      remote: clientAddress(c),
    });
  };
}
