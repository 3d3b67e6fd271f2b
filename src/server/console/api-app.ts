// The web console's API (src/protocol/console-api.ts) as one sub-app mounted at /v1, owning its authentication:
// a bearer credential, or — for a browser with no Authorization header — the console's session cookie (with the
// CSRF check on mutations). Only the routes declared here take the cookie: MCP endpoints, hooks and enrollment are
// other sub-apps, so a browser session can never act as an agent.
import { Hono, type MiddlewareHandler } from "hono";
import { createClientRoutes } from "../admin/clients-routes.js";
import { credentialNames } from "../admin/credential-names.js";
import { createOverviewRoutes } from "../admin/overview.js";
import { createAdminRoutes } from "../admin/routes.js";
import { createApprovalRoutes } from "../approvals/routes.js";
import { createAuditRoutes } from "../audit/routes.js";
import { createContextRoutes } from "../context/routes.js";
import { createRateLimiter } from "../enrollment/rate-limit.js";
import type { ResolvedGatewayDeps } from "../gateway-deps.js";
import type { GatewayEnv } from "../http/env.js";
import { guardRoutes } from "../http/guard-routes.js";
import { renderProblem, wireErrorHandler } from "../http/wire-failure.js";
import { createPageRoutes } from "../memory/pages-routes.js";
import { type ConsoleAuth, createConsoleAuth } from "./session-auth.js";
import { createConsoleSessionAdminRoutes, createConsoleSessionRoutes } from "./session-routes.js";
import type { ConsoleStore } from "./store.js";

export interface ConsoleApiDeps extends ResolvedGatewayDeps {
  /** The bearer check every /v1 route accepts. */
  bearer: MiddlewareHandler<GatewayEnv>;
}

/** The console's sign-in state and cookie auth, when the console is enabled. */
interface ConsoleSignIn {
  store: ConsoleStore;
  auth: ConsoleAuth;
  idleMs: number;
}

export function createConsoleApiApp(deps: ConsoleApiDeps): Hono<GatewayEnv> {
  const signIn = consoleSignIn(deps);
  const api = new Hono<GatewayEnv>();
  // Sign-in takes no credential but a code, and the session routes check their own cookie.
  if (signIn) api.route("/console/session", sessionRoutes(deps, signIn));
  api.route("/", guardRoutes(consoleApiRoutes(deps, signIn), consoleApiAuth(deps.bearer, signIn?.auth)));
  // The gateway's one wire policy, stated where the console's API is: internal details stay in the log.
  api.onError(wireErrorHandler(deps.logger, renderProblem));
  return api;
}

function consoleSignIn(deps: ConsoleApiDeps): ConsoleSignIn | undefined {
  if (!deps.console) return undefined;
  const idleMs = deps.config.console.idle_timeout;
  const auth = createConsoleAuth({ store: deps.console, publicUrl: deps.publicUrl, idleMs, now: deps.now });
  return { store: deps.console, auth, idleMs };
}

/** A bearer when the request sends one (or has no console cookie); else the console session behind its cookie. */
function consoleApiAuth(
  bearer: MiddlewareHandler<GatewayEnv>,
  auth: ConsoleAuth | undefined,
): MiddlewareHandler<GatewayEnv> {
  return (c, next) => {
    if (auth && c.req.header("authorization") === undefined && auth.cookieOf(c) !== undefined) {
      return auth.middleware(c, next);
    }
    return bearer(c, next);
  };
}

function sessionRoutes(deps: ConsoleApiDeps, signIn: ConsoleSignIn): Hono<GatewayEnv> {
  return createConsoleSessionRoutes({
    store: signIn.store,
    auth: signIn.auth,
    limiter: createRateLimiter({ perMinute: deps.config.enrollment.attempts_per_minute }),
    logger: deps.logger,
    absoluteMs: deps.config.console.absolute_timeout,
    idleMs: signIn.idleMs,
    now: deps.now,
  });
}

/** Overview, status and clients; approvals; audit; memory pages and graph; context search; console sessions. */
function consoleApiRoutes(deps: ConsoleApiDeps, signIn: ConsoleSignIn | undefined): Hono<GatewayEnv> {
  const routes = new Hono<GatewayEnv>();
  routes.route("/admin", adminRoutes(deps));
  // Approvals exist where memory is configured (the gate answers 503 while memory is down).
  if (deps.memory !== undefined) {
    routes.route(
      "/approvals",
      createApprovalRoutes({
        gate: deps.memory?.gate,
        names: () => credentialNames({ enrollment: deps.enrollment, oauth: deps.oauth }),
      }),
    );
  }
  if (signIn) routes.route("/console/sessions", sessionAdminRoutes(deps, signIn));
  routes.route(
    "/audit",
    createAuditRoutes({
      audit: deps.audit,
      memory: deps.memory?.store,
      enrollment: deps.enrollment,
      oauth: deps.oauth,
      now: deps.now,
    }),
  );
  routes.route("/memory", createPageRoutes({ store: deps.memory?.store }));
  if (deps.context) {
    routes.route(
      "/context",
      createContextRoutes({ context: deps.context, ...(deps.audit ? { audit: deps.audit } : {}) }),
    );
  }
  return routes;
}

/** /v1/admin: status, doctor and connectors; the overview; clients, Web MCP clients and grants. */
function adminRoutes(deps: ConsoleApiDeps): Hono<GatewayEnv> {
  const admin = new Hono<GatewayEnv>();
  admin.route(
    "/",
    createAdminRoutes({
      config: deps.config,
      paths: deps.paths,
      enrollment: deps.enrollment,
      listenerMode: deps.listenerMode,
      startedAt: deps.startedAt,
      now: deps.now,
      listConnectors: async () => (deps.context ? deps.context.listConnectors() : []),
      vectors: deps.context?.vectors,
      ...(deps.memory !== undefined
        ? { memory: { open: deps.memory !== null, vectors: deps.memory?.vectors } }
        : {}),
    }),
  );
  admin.route(
    "/",
    createOverviewRoutes({
      enrollment: deps.enrollment,
      readiness: deps.readiness,
      context: deps.context,
      memory: deps.memory?.store,
      oauth: deps.oauth,
      startedAt: deps.startedAt,
      now: deps.now,
    }),
  );
  admin.route(
    "/",
    createClientRoutes({ enrollment: deps.enrollment, oauth: deps.oauth, audit: deps.audit, now: deps.now }),
  );
  return admin;
}

function sessionAdminRoutes(deps: ConsoleApiDeps, signIn: ConsoleSignIn): Hono<GatewayEnv> {
  return createConsoleSessionAdminRoutes({
    store: signIn.store,
    auth: signIn.auth,
    logger: deps.logger,
    idleMs: signIn.idleMs,
    now: deps.now,
    audit: deps.audit,
  });
}
