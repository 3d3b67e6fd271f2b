// /v1/console/session: a single-use sign-in code becomes a session cookie (POST); the page reads its session
// and CSRF token (GET) and signs out (DELETE). The cookie is the only credential these routes take.
// /v1/console/sessions: a console admin lists every session and revokes one.
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { ConsoleSessionView } from "../../protocol/console-api.js";
import type { Logger } from "../../shared/logger.js";
import type { AuditEvent, AuditLog } from "../audit/store.js";
import type { RateLimiter } from "../enrollment/rate-limit.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import type { ConsoleAuth } from "./session-auth.js";
import { type ConsoleSessionRecord, type ConsoleStore, consoleSessionState, idleEnd } from "./store.js";

const signInSchema = z.object({ code: z.string().min(1).max(256) }).strict();
/** A sign-in body is a code and nothing else. */
const MAX_SIGN_IN_BYTES = 1024;

export interface ConsoleSessionRoutesDeps {
  store: ConsoleStore;
  auth: ConsoleAuth;
  limiter: RateLimiter;
  logger: Logger;
  absoluteMs: number;
  idleMs: number;
  now: () => Date;
  /** Where an admin's revocation of a session is recorded (`client_revoked`), as every other revocation is. */
  audit?: AuditLog | undefined;
}

/**
 * The audit event of a revoked console session: who it was (name, role), never its token or the token's hash.
 * The console's admin route and `ivoai server console revoke` (the local operator as actor) both record it.
 */
export function consoleSessionRevoked(
  session: Pick<ConsoleSessionRecord, "id" | "name" | "role">,
  actor: string,
  actorId: string,
): AuditEvent {
  return {
    kind: "client_revoked",
    actor,
    detail: {
      target: "console_session",
      id: session.id,
      name: session.name,
      role: session.role,
      actor_id: actorId,
    },
  };
}

export function createConsoleSessionRoutes(deps: ConsoleSessionRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.post("/", (c) => signIn(c, deps));
  app.get("/", async (c) => {
    const result = await deps.auth.authenticate(c);
    if (!result.ok) return result.response;
    return c.json(deps.auth.sessionBody(result.session, result.token));
  });
  app.delete("/", (c) => signOut(c, deps));
  return app;
}

/** POST /v1/console/session: a sign-in code becomes a session and its cookie. */
async function signIn(c: Context<GatewayEnv>, deps: ConsoleSessionRoutesDeps): Promise<Response> {
  const source = clientAddress(c);
  const budget = deps.limiter.hit(source);
  if (!budget.allowed) {
    deps.logger.warn("console sign-in rate limited", { remote: source });
    c.header("Retry-After", String(budget.retryAfterSeconds));
    return problem(c, 429, "rate_limited", "too many sign-in attempts; try again later");
  }
  const body = await readJsonBody(c, signInSchema, MAX_SIGN_IN_BYTES);
  if (!body.ok) return body.response;
  const now = deps.now();
  const opened = await deps.store.exchangeCode(body.value.code, now, deps.absoluteMs);
  if (!opened) {
    // One answer for unknown, used and expired codes: the state of a code is not disclosed.
    deps.logger.warn("console sign-in refused", { remote: source });
    return problem(c, 401, "invalid_code", "the sign-in code is invalid, used or expired");
  }
  // Ended codes and sessions go with each sign-in (not with every refused attempt).
  await deps.store.prune(now, deps.idleMs);
  const replaced = await revokePrevious(c, deps, now);
  deps.logger.info("console session opened", {
    session_id: opened.session.id,
    role: opened.session.role,
    remote: source,
    ...(replaced ? { replaced_session_id: replaced.id } : {}),
  });
  deps.auth.setCookie(c, opened.token, opened.session, now);
  return c.json(deps.auth.sessionBody(opened.session, opened.token));
}

/** A browser that signs in again (a new link in a signed-in tab) leaves no older session valid behind it. */
async function revokePrevious(
  c: Context<GatewayEnv>,
  deps: ConsoleSessionRoutesDeps,
  now: Date,
): Promise<ConsoleSessionRecord | undefined> {
  const previous = deps.auth.cookieOf(c);
  const replaced = previous === undefined ? undefined : await deps.store.findSession(previous);
  if (replaced && !replaced.revoked_at) await deps.store.revoke(replaced.id, now);
  return replaced;
}

/** DELETE /v1/console/session: signs out (CSRF), revoking the session and clearing its cookie. */
async function signOut(c: Context<GatewayEnv>, deps: ConsoleSessionRoutesDeps): Promise<Response> {
  const result = await deps.auth.authenticate(c);
  if (!result.ok) return result.response;
  const refused = deps.auth.checkCsrf(c, result.token);
  if (refused) return refused;
  await deps.store.revoke(result.session.id, deps.now());
  deps.logger.info("console session closed", { session_id: result.session.id });
  deps.auth.clearCookie(c);
  return c.body(null, 204);
}

/** A stored session as an admin sees it: never its token or the token's hash (the store does not return them). */
function sessionView(
  session: ConsoleSessionRecord,
  now: Date,
  idleMs: number,
  currentId: string | undefined,
): ConsoleSessionView {
  return {
    id: session.id,
    name: session.name,
    role: session.role,
    created_at: session.created_at,
    last_seen_at: session.last_seen_at,
    idle_expires_at: idleEnd(session, idleMs),
    expires_at: session.expires_at,
    revoked_at: session.revoked_at,
    state: consoleSessionState(session, now, idleMs),
    current: session.id === currentId,
  };
}

const SESSION_ID = /^cs_[\w-]{1,128}$/;

type SessionAdminDeps = Pick<
  ConsoleSessionRoutesDeps,
  "store" | "auth" | "logger" | "idleMs" | "now" | "audit"
>;

/**
 * /v1/console/sessions: every console session (GET) and revoking one (POST /:id/revoke, CSRF) — for a console
 * admin only. A bearer credential is refused whatever its scopes: managing people's sign-ins is a console role's
 * job, and the role is read from the session behind the request's own cookie.
 */
export function createConsoleSessionAdminRoutes(deps: SessionAdminDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/", async (c) => {
    const caller = await consoleAdmin(c, deps);
    if (!caller.ok) return caller.response;
    const now = deps.now();
    const sessions = await deps.store.listSessions();
    return c.json({
      sessions: sessions.map((session) => sessionView(session, now, deps.idleMs, caller.session.id)),
    });
  });
  app.post("/:id/revoke", (c) => revokeSession(c, deps));
  return app;
}

/** The admin's own session, or the 403 to answer. */
async function consoleAdmin(
  c: Context<GatewayEnv>,
  deps: SessionAdminDeps,
): Promise<{ ok: true; session: ConsoleSessionRecord } | { ok: false; response: Response }> {
  const refused = {
    ok: false as const,
    response: problem(c, 403, "forbidden", "only a console admin can manage console sessions"),
  };
  const token = deps.auth.cookieOf(c);
  if (token === undefined) return refused;
  const session = await deps.store.findSession(token);
  // The principal the middleware set must be this very session (not a bearer sent beside a cookie).
  if (!session || c.get("client")?.id !== `console_${session.id}` || session.role !== "admin") return refused;
  return { ok: true, session };
}

/** POST /v1/console/sessions/:id/revoke: ends another session, recorded in the audit log. */
async function revokeSession(c: Context<GatewayEnv>, deps: SessionAdminDeps): Promise<Response> {
  const caller = await consoleAdmin(c, deps);
  if (!caller.ok) return caller.response;
  const id = c.req.param("id") ?? "";
  if (!SESSION_ID.test(id)) return problem(c, 400, "invalid_request", "invalid session id");
  const now = deps.now();
  const revoked = await deps.store.revoke(id, now);
  if (!revoked) return problem(c, 404, "not_found", `no console session with id ${id}`);
  deps.logger.info("console session revoked", { session_id: id, by_session_id: caller.session.id });
  // Written before the answer, as the other revocations are: acknowledged only once its record is durable.
  const by = c.get("client");
  await deps.audit?.record(consoleSessionRevoked(revoked, `${by.name} (${by.id})`, by.id));
  return c.json(sessionView(revoked, now, deps.idleMs, caller.session.id));
}
