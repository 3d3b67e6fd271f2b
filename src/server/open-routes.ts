// The routes anyone may call, with no credential: discovery (what this process mounts) and the health probes.
import { Hono } from "hono";
import { buildDiscoveryDocument, type DiscoveryFeatures, ENDPOINTS } from "../protocol/discovery.js";
import { IVOAI_VERSION } from "../shared/version.js";
import type { GatewayAppDeps } from "./gateway-deps.js";
import { evaluateReadiness } from "./health/readiness.js";
import type { GatewayEnv } from "./http/env.js";

/** The discovery document tells exactly what this process mounts. */
export function discoveryFeatures(deps: GatewayAppDeps): DiscoveryFeatures {
  return {
    context: deps.context !== undefined,
    memory: deps.memory !== undefined,
    memory_hooks: deps.memory !== undefined,
    web_mcp: deps.oauth !== undefined,
    oauth_pkce: deps.oauth !== undefined,
    remote_admin_read_only: true,
    web_console: deps.console !== undefined,
  };
}

export function createOpenRoutes(deps: GatewayAppDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const features = discoveryFeatures(deps);
  app.get(ENDPOINTS.discovery, (c) =>
    c.json(
      buildDiscoveryDocument({ serverVersion: IVOAI_VERSION, publicBaseUrl: deps.publicUrl(), features }),
    ),
  );
  app.get(ENDPOINTS.health, (c) => c.json({ status: "alive" }));
  app.get(ENDPOINTS.ready, async (c) => {
    const report = await evaluateReadiness(deps.readiness);
    for (const check of report.checks.filter((entry) => !entry.ok)) {
      deps.logger.warn("readiness check failed", { check: check.name, error: check.error });
    }
    const body = { status: report.status, degraded: report.degraded, failed: report.failed };
    return c.json(body, report.status === "not_ready" ? 503 : 200);
  });
  return app;
}
