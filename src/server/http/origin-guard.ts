// The gateway's DNS-rebinding guard for its MCP endpoints, over the shared Host/Origin policy.
import type { MiddlewareHandler } from "hono";
import { isLoopbackHost } from "../../shared/loopback.js";
import { checkOrigin } from "../../shared/origin-policy.js";
import type { GatewayEnv } from "./env.js";
import { problem } from "./problem.js";

export interface OriginGuardOptions {
  /** The public base URL (read per request: a loopback demo's follows the bound port). */
  publicUrl: () => string;
  /** The host the listener is bound to: loopback names are accepted too when it is loopback. */
  listenHost: string;
}

/** Refuses (403) a request whose Host is not the public one (or loopback, when bound there) or whose Origin is foreign. */
export function originGuard(options: OriginGuardOptions): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    const publicOrigin = options.publicUrl();
    const verdict = checkOrigin(
      { host: c.req.header("host") ?? new URL(c.req.url).host, origin: c.req.header("origin") },
      {
        publicOrigin,
        ...(isLoopbackHost(options.listenHost) || isLoopbackHost(new URL(publicOrigin).hostname)
          ? { loopback: {} }
          : {}),
      },
    );
    if (!verdict.ok) return problem(c, 403, verdict.error, verdict.message);
    await next();
  };
}
