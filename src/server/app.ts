// The gateway's HTTP surface, composed from sub-apps that each declare their own authentication: the open routes
// (discovery, health, enrollment, OAuth, the console's files), the console API (bearer or session cookie), the
// agents' API (bearer only) and Web MCP (OAuth tokens). One origin for all; one wire policy for every failure.
import { Hono } from "hono";
import { ENDPOINTS } from "../protocol/discovery.js";
import { createAgentApi } from "./agent-api.js";
import { createConsoleApiApp } from "./console/api-app.js";
import { createConsoleSiteRoutes, defaultConsoleSite } from "./console/static-site.js";
import { createRateLimiter } from "./enrollment/rate-limit.js";
import { createEnrollRoutes } from "./enrollment/routes.js";
import { type GatewayAppDeps, type ResolvedGatewayDeps, resolveGatewayDeps } from "./gateway-deps.js";
import { bearerAuth } from "./http/bearer-auth.js";
import { bodyLimit } from "./http/body-limit.js";
import { clientAddressMiddleware } from "./http/client-address.js";
import type { GatewayEnv } from "./http/env.js";
import { parseListen } from "./http/listener-policy.js";
import { originGuard } from "./http/origin-guard.js";
import { problem } from "./http/problem.js";
import { requestLog } from "./http/request-log.js";
import { reverseProxyGuard } from "./http/reverse-proxy.js";
import { renderProblem, wireErrorHandler } from "./http/wire-failure.js";
import { createOAuthRoutes } from "./oauth/routes.js";
import type { OAuthStore } from "./oauth/store.js";
import { createOpenRoutes } from "./open-routes.js";
import { createWebMcpRoutes } from "./web-mcp/routes.js";

export type { GatewayAppDeps } from "./gateway-deps.js";

export function createGatewayApp(input: GatewayAppDeps): Hono<GatewayEnv> {
  const deps = resolveGatewayDeps(input);
  const app = new Hono<GatewayEnv>();
  useRequestPolicies(app, deps);
  app.route("/", createOpenRoutes(deps));
  useOriginGuard(app, deps);
  app.route(ENDPOINTS.enroll, enrollRoutes(deps));
  const bearer = bearerAuth({ authenticate: (credential) => deps.enrollment.authenticate(credential) });
  app.route("/v1", createConsoleApiApp({ ...deps, bearer }));
  // After every other /v1 sub-app: its bearer check answers any /v1 path they did not.
  app.route("/", createAgentApi({ ...deps, bearer }));
  if (deps.oauth) app.route("/", webMcpRoutes(deps, deps.oauth));
  app.route("/", createConsoleSiteRoutes(deps.consoleSite ?? defaultConsoleSite()));
  app.notFound((c) => problem(c, 404, "not_found", "no such endpoint"));
  // The log gets the reason (never a stack); the caller only the generic wire error naming the request.
  app.onError(wireErrorHandler(deps.logger, renderProblem));
  return app;
}

/** Every request: its client address, id and log line, the reverse proxy's rules, the body limit. */
function useRequestPolicies(app: Hono<GatewayEnv>, deps: ResolvedGatewayDeps): void {
  app.use(clientAddressMiddleware(deps.config.server.trusted_proxy_cidrs));
  app.use(requestLog(deps.logger));
  if (deps.listenerMode === "reverse-proxy") {
    app.use(
      reverseProxyGuard({
        trustedCidrs: deps.config.server.trusted_proxy_cidrs,
        probePaths: [ENDPOINTS.health, ENDPOINTS.ready],
      }),
    );
  }
  const maxSize = deps.config.limits.max_body_bytes;
  app.use(
    bodyLimit({
      maxSize,
      onError: (c) => problem(c, 413, "payload_too_large", `request bodies are limited to ${maxSize} bytes`),
    }),
  );
}

/**
 * DNS-rebinding protection on every credentialed or state-changing route (the whole /v1 API, Web MCP and the
 * console), before any credential is looked at; discovery and the health probes stay open.
 */
function useOriginGuard(app: Hono<GatewayEnv>, deps: ResolvedGatewayDeps): void {
  const guard = originGuard({
    publicUrl: deps.publicUrl,
    listenHost: deps.listenHost ?? parseListen(deps.config.server.listen).host,
  });
  for (const path of ["/v1/*", ENDPOINTS.webMcp, "/console", "/console/*"]) app.use(path, guard);
}

function enrollRoutes(deps: ResolvedGatewayDeps): Hono<GatewayEnv> {
  return createEnrollRoutes({
    enrollment: deps.enrollment,
    limiter: createRateLimiter({ perMinute: deps.config.enrollment.attempts_per_minute }),
    logger: deps.logger,
  });
}

/** The OAuth authorization server and the Web MCP endpoint its tokens open. */
function webMcpRoutes(deps: ResolvedGatewayDeps, oauth: OAuthStore): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.route(
    "/",
    createOAuthRoutes({
      store: oauth,
      issuer: deps.publicUrl,
      logger: deps.logger,
      refreshFamilyTtlMs: deps.config.oauth.refresh_family_ttl,
    }),
  );
  app.route(
    "/",
    createWebMcpRoutes({
      store: oauth,
      issuer: deps.publicUrl,
      ...(deps.context ? { context: deps.context } : {}),
      ...(deps.memory ? { memory: deps.memory } : {}),
      ...(deps.audit ? { audit: deps.audit } : {}),
      logger: deps.logger,
    }),
  );
  return app;
}
