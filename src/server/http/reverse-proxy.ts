// Behind a TLS-terminating reverse proxy: only its source ranges may connect, and only forwarded HTTPS is served.
import type { MiddlewareHandler } from "hono";
import { type GatewayEnv, remoteAddress } from "./env.js";
import { createCidrMatcher } from "./listener-policy.js";
import { problem } from "./problem.js";

export interface ReverseProxyOptions {
  trustedCidrs: readonly string[];
  /** Paths a proxy's health probe may reach without X-Forwarded-Proto (still from a trusted source). */
  probePaths?: readonly string[];
}

export function reverseProxyGuard(options: ReverseProxyOptions): MiddlewareHandler<GatewayEnv> {
  const trusted = createCidrMatcher(options.trustedCidrs);
  const probes = new Set(options.probePaths ?? []);
  return async (c, next) => {
    if (!trusted(remoteAddress(c))) {
      return problem(
        c,
        403,
        "untrusted_source",
        "connections are accepted only from the configured reverse proxy",
      );
    }
    const proto = c.req.header("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto !== "https" && !probes.has(c.req.path)) {
      return problem(c, 403, "https_required", "this server is served over HTTPS only");
    }
    await next();
  };
}
