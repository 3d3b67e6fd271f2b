// The gateway's HTTP surface, composed from the domain routes; one origin for discovery, health and /v1.
import { Hono } from "hono";
import type { ServerConfig } from "../config/server-config.js";
import type { ServerPaths } from "../config/server-paths.js";
import { buildDiscoveryDocument, type DiscoveryFeatures, ENDPOINTS } from "../protocol/discovery.js";
import { parseDuration } from "../shared/duration.js";
import { isIvoaiError } from "../shared/errors.js";
import type { Logger } from "../shared/logger.js";
import { newId } from "../shared/tokens.js";
import { IVOAI_VERSION } from "../shared/version.js";
import { createClientRoutes } from "./admin/clients-routes.js";
import { credentialNames } from "./admin/credential-names.js";
import { createOverviewRoutes } from "./admin/overview.js";
import { createAdminRoutes } from "./admin/routes.js";
import { createApprovalRoutes } from "./approvals/routes.js";
import { createAuditRoutes } from "./audit/routes.js";
import type { AuditLog } from "./audit/store.js";
import { CONSOLE_SESSION_PATH, createConsoleAuth, isConsoleApiPath } from "./console/session-auth.js";
import { createConsoleSessionAdminRoutes, createConsoleSessionRoutes } from "./console/session-routes.js";
import { type ConsoleSite, createConsoleSiteRoutes, defaultConsoleSite } from "./console/static-site.js";
import type { ConsoleStore } from "./console/store.js";
import { createContextResources } from "./context/resources.js";
import { createContextRoutes } from "./context/routes.js";
import type { ContextService } from "./context/service.js";
import { CONTEXT_INSTRUCTIONS } from "./context/tools.js";
import { createRateLimiter } from "./enrollment/rate-limit.js";
import { createEnrollRoutes } from "./enrollment/routes.js";
import type { EnrollmentService } from "./enrollment/service.js";
import { evaluateReadiness, type ReadinessCheck } from "./health/readiness.js";
import { bearerAuth, requireScope } from "./http/bearer-auth.js";
import { bodyLimit } from "./http/body-limit.js";
import { clientAddressMiddleware } from "./http/client-address.js";
import { setDefaultHeaders } from "./http/default-headers.js";
import { clientAddress, type GatewayEnv } from "./http/env.js";
import { type ListenerMode, parseListen } from "./http/listener-policy.js";
import { originGuard } from "./http/origin-guard.js";
import { problem, problemForError } from "./http/problem.js";
import { reverseProxyGuard } from "./http/reverse-proxy.js";
import { createMcpEndpoint } from "./mcp/endpoint.js";
import { createGatewayPrompts } from "./mcp/gateway-prompts.js";
import { createHookRoutes } from "./memory/hooks-routes.js";
import { createPageRoutes } from "./memory/pages-routes.js";
import { createMemoryResources } from "./memory/resources.js";
import type { MemoryService } from "./memory/service.js";
import { MEMORY_INSTRUCTIONS } from "./memory/tools.js";
import { createOAuthRoutes } from "./oauth/routes.js";
import type { OAuthStore } from "./oauth/store.js";
import { createWebMcpRoutes } from "./web-mcp/routes.js";

export interface GatewayAppDeps {
  config: ServerConfig;
  paths: ServerPaths;
  enrollment: EnrollmentService;
  logger: Logger;
  listenerMode: ListenerMode;
  /** The host the listener is bound to (default: the configured listen address's). */
  listenHost?: string;
  /** The public base URL clients see (may follow the bound port for a loopback port-0 demo). */
  publicUrl: () => string;
  readiness: readonly ReadinessCheck[];
  /** The context service, when this process serves it. */
  context?: ContextService;
  /** The memory service; null when it could not be opened (memory routes answer 503, the server runs degraded). */
  memory?: MemoryService | null;
  /** Where tool calls and decisions are recorded. */
  audit?: AuditLog;
  /** OAuth state; with it the gateway serves Web MCP (/mcp) and its authorization server. */
  oauth?: OAuthStore;
  /** Web console sign-in state; with it the console's session cookie authenticates the console's API. */
  console?: ConsoleStore;
  /** The console's static files (default: the bundled ones, else dist/console of a checkout). */
  consoleSite?: ConsoleSite;
  startedAt?: Date;
  now?: () => Date;
}

export function createGatewayApp(deps: GatewayAppDeps): Hono<GatewayEnv> {
  const now = deps.now ?? (() => new Date());
  const app = new Hono<GatewayEnv>();
  // The discovery document tells exactly what this process mounts.
  const features: DiscoveryFeatures = {
    context: deps.context !== undefined,
    memory: deps.memory !== undefined,
    memory_hooks: deps.memory !== undefined,
    web_mcp: deps.oauth !== undefined,
    oauth_pkce: deps.oauth !== undefined,
    remote_admin_read_only: true,
    web_console: deps.console !== undefined,
  };

  app.use(clientAddressMiddleware(deps.config.server.trusted_proxy_cidrs));
  app.use(async (c, next) => {
    const started = performance.now();
    c.set("requestId", newId("req_"));
    await next();
    // The console's static files set their own caching; everything else is never stored.
    setDefaultHeaders(c);
    // Path only: a query string may carry a token a client should never have sent.
    deps.logger.info("request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      remote: clientAddress(c),
    });
  });
  if (deps.listenerMode === "reverse-proxy") {
    app.use(
      reverseProxyGuard({
        trustedCidrs: deps.config.server.trusted_proxy_cidrs,
        probePaths: [ENDPOINTS.health, ENDPOINTS.ready],
      }),
    );
  }
  app.use(
    bodyLimit({
      maxSize: deps.config.limits.max_body_bytes,
      onError: (c) =>
        problem(
          c,
          413,
          "payload_too_large",
          `request bodies are limited to ${deps.config.limits.max_body_bytes} bytes`,
        ),
    }),
  );

  app.get(ENDPOINTS.discovery, (c) =>
    c.json(
      buildDiscoveryDocument({
        serverVersion: IVOAI_VERSION,
        publicBaseUrl: deps.publicUrl(),
        features,
      }),
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

  // DNS-rebinding protection on every credentialed or state-changing route (the whole /v1 API and Web MCP),
  // before any credential is looked at; discovery and the health probes stay open.
  const guard = originGuard({
    publicUrl: deps.publicUrl,
    listenHost: deps.listenHost ?? parseListen(deps.config.server.listen).host,
  });
  app.use("/v1/*", guard);
  app.use(ENDPOINTS.webMcp, guard);
  app.use("/console", guard);
  app.use("/console/*", guard);

  app.route(
    ENDPOINTS.enroll,
    createEnrollRoutes({
      enrollment: deps.enrollment,
      limiter: createRateLimiter({ perMinute: deps.config.enrollment.attempts_per_minute }),
      logger: deps.logger,
    }),
  );

  const consoleStore = deps.console;
  const consoleIdleMs = parseDuration(deps.config.console.idle_timeout);
  const consoleAuth =
    consoleStore &&
    createConsoleAuth({
      store: consoleStore,
      publicUrl: deps.publicUrl,
      idleMs: consoleIdleMs,
      now,
    });
  if (consoleStore && consoleAuth) {
    app.route(
      CONSOLE_SESSION_PATH,
      createConsoleSessionRoutes({
        store: consoleStore,
        auth: consoleAuth,
        limiter: createRateLimiter({ perMinute: deps.config.enrollment.attempts_per_minute }),
        logger: deps.logger,
        absoluteMs: parseDuration(deps.config.console.absolute_timeout),
        idleMs: consoleIdleMs,
        now,
      }),
    );
  }

  const auth = bearerAuth({ authenticate: (credential) => deps.enrollment.authenticate(credential) });
  app.use("/v1/*", (c, next) => {
    if (c.req.path === ENDPOINTS.enroll || (consoleAuth && c.req.path === CONSOLE_SESSION_PATH))
      return next();
    // A browser's console session (no bearer) works on the console's API only, never on MCP, hooks or enroll.
    if (
      consoleAuth &&
      c.req.header("authorization") === undefined &&
      isConsoleApiPath(c.req.path) &&
      consoleAuth.cookieOf(c) !== undefined
    ) {
      return consoleAuth.middleware(c, next);
    }
    return auth(c, next);
  });
  app.route(
    "/v1/admin",
    createAdminRoutes({
      config: deps.config,
      paths: deps.paths,
      enrollment: deps.enrollment,
      listenerMode: deps.listenerMode,
      startedAt: deps.startedAt ?? now(),
      now,
      listConnectors: async () => (deps.context ? deps.context.listConnectors() : []),
    }),
  );

  // Each endpoint offers the prompts its caller's tools can follow.
  const prompts = createGatewayPrompts({ context: deps.context, memory: deps.memory });
  if (deps.context) {
    const endpoint = createMcpEndpoint({
      name: "ivoai-context",
      instructions: CONTEXT_INSTRUCTIONS,
      tools: deps.context.tools,
      resources: [createContextResources(deps.context.catalogue)],
      prompts,
      logger: deps.logger,
      ...(deps.audit ? { audit: deps.audit } : {}),
    });
    app.all(ENDPOINTS.contextMcp, requireScope("context:read"), (c) =>
      endpoint(c.req.raw, c.get("client"), c.get("requestId")),
    );
  }

  if (deps.memory !== undefined) {
    const memory = deps.memory ?? undefined;
    const endpoint =
      memory &&
      createMcpEndpoint({
        name: "ivoai-memory",
        instructions: MEMORY_INSTRUCTIONS,
        tools: memory.tools,
        resources: [createMemoryResources(memory.store)],
        prompts,
        gate: memory.gate,
        logger: deps.logger,
        ...(deps.audit ? { audit: deps.audit } : {}),
      });
    app.all(ENDPOINTS.memoryMcp, (c) =>
      endpoint
        ? endpoint(c.req.raw, c.get("client"), c.get("requestId"))
        : problem(c, 503, "memory_unavailable", "the memory service is unavailable"),
    );
    app.route(ENDPOINTS.memoryHooks, createHookRoutes({ store: memory?.store }));
    app.route(
      "/v1/approvals",
      createApprovalRoutes({
        gate: memory?.gate,
        names: () => credentialNames({ enrollment: deps.enrollment, oauth: deps.oauth }),
      }),
    );
  }

  // ---- The web console's read/act API (src/protocol/console-api.ts): overview, clients and revocation,
  // audit activity/events/timelines, memory pages and graph, context search. Bearer-authenticated like all
  // of /v1; each route checks its own scope.
  app.route(
    "/v1/admin",
    createOverviewRoutes({
      enrollment: deps.enrollment,
      readiness: deps.readiness,
      context: deps.context,
      memory: deps.memory?.store,
      oauth: deps.oauth,
      startedAt: deps.startedAt ?? now(),
      now: now,
    }),
  );
  app.route(
    "/v1/admin",
    createClientRoutes({
      enrollment: deps.enrollment,
      oauth: deps.oauth,
      audit: deps.audit,
      now: now,
    }),
  );
  if (consoleStore && consoleAuth) {
    app.route(
      "/v1/console/sessions",
      createConsoleSessionAdminRoutes({
        store: consoleStore,
        auth: consoleAuth,
        logger: deps.logger,
        idleMs: consoleIdleMs,
        now,
        audit: deps.audit,
      }),
    );
  }
  app.route(
    "/v1/audit",
    createAuditRoutes({
      audit: deps.audit,
      memory: deps.memory?.store,
      enrollment: deps.enrollment,
      oauth: deps.oauth,
      now: now,
    }),
  );
  app.route("/v1/memory", createPageRoutes({ store: deps.memory?.store }));
  if (deps.context) {
    app.route(
      "/v1/context",
      createContextRoutes({
        context: deps.context,
        ...(deps.audit ? { audit: deps.audit } : {}),
      }),
    );
  }
  // ---- end of the console API

  if (deps.oauth) {
    app.route(
      "/",
      createOAuthRoutes({
        store: deps.oauth,
        issuer: deps.publicUrl,
        logger: deps.logger,
        refreshFamilyTtlMs: parseDuration(deps.config.oauth.refresh_family_ttl),
      }),
    );
    app.route(
      "/",
      createWebMcpRoutes({
        store: deps.oauth,
        issuer: deps.publicUrl,
        ...(deps.context ? { context: deps.context } : {}),
        ...(deps.memory ? { memory: deps.memory } : {}),
        ...(deps.audit ? { audit: deps.audit } : {}),
        logger: deps.logger,
      }),
    );
  }

  app.route("/", createConsoleSiteRoutes(deps.consoleSite ?? defaultConsoleSite()));

  app.notFound((c) => problem(c, 404, "not_found", "no such endpoint"));
  app.onError((error, c) => {
    const { status, body } = problemForError(error);
    if (status >= 500) {
      // The log gets the reason (never a stack); the caller only the generic wire error.
      deps.logger.error("request failed", {
        request_id: c.get("requestId"),
        ...(isIvoaiError(error) ? { code: error.code } : {}),
        error: error.message,
      });
    }
    return c.json(body, status);
  });
  return app;
}
