// Cookie authentication of web console sessions: the cookie's attributes, the CSRF token derived from the
// session token, and the check that turns a live session into the request's principal.
import { createHmac } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import {
  CONSOLE_COOKIE,
  CONSOLE_COOKIE_SECURE,
  type ConsoleSession,
  CSRF_HEADER,
  IDLE_HEADER,
} from "../../protocol/console-api.js";
import { CONSOLE_ROLE_SCOPES } from "../../protocol/scopes.js";
import { safeEqual } from "../../shared/tokens.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import {
  CONSOLE_SESSION_PREFIX,
  type ConsoleSessionRecord,
  type ConsoleStore,
  consoleSessionState,
  idleEnd,
} from "./store.js";

/** The CSRF token of a session: HMAC-SHA256 keyed by its token, so it can be recomputed and is never stored. */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac("sha256", sessionToken).update("ivoai console csrf").digest("base64url");
}

const TOKEN_SHAPE = new RegExp(`^${CONSOLE_SESSION_PREFIX}[A-Za-z0-9_-]{43}$`);
/** Activity is written at most this often (never less often than a tenth of the idle timeout). */
const TOUCH_INTERVAL_MS = 30_000;

export interface ConsoleAuthOptions {
  store: ConsoleStore;
  /** The public base URL: https gets the `__Host-` cookie with Secure. */
  publicUrl: () => string;
  idleMs: number;
  now: () => Date;
}

export type ConsoleAuthResult =
  | { ok: true; session: ConsoleSessionRecord; token: string }
  | { ok: false; response: Response };

export interface ConsoleAuth {
  /** The cookie's name under the current public URL. */
  cookieName(): string;
  /** The cookie's value, if the request carries one. */
  cookieOf(c: Context<GatewayEnv>): string | undefined;
  /** `Set-Cookie` for a session opened at `now`, ending with it. */
  setCookie(c: Context<GatewayEnv>, token: string, session: ConsoleSessionRecord, now: Date): void;
  /** `Set-Cookie` that removes the cookie. */
  clearCookie(c: Context<GatewayEnv>): void;
  /** The live session of the request's cookie (activity recorded), else a 401 that clears the cookie. */
  authenticate(c: Context<GatewayEnv>): Promise<ConsoleAuthResult>;
  /** A 403 unless the request is safe (GET/HEAD) or carries the session's CSRF token. */
  checkCsrf(c: Context<GatewayEnv>, token: string): Response | undefined;
  /** What GET/POST /v1/console/session answer. */
  sessionBody(session: ConsoleSessionRecord, token: string): ConsoleSession;
  /** Authenticates /v1 requests by cookie (with CSRF on mutations) and sets the principal. */
  middleware: MiddlewareHandler<GatewayEnv>;
}

/** The idle time the page reports (IDLE_HEADER, whole seconds); 0 when absent or malformed. */
function idleMsOf(c: Context<GatewayEnv>): number {
  const text = c.req.header(IDLE_HEADER) ?? "";
  return /^\d{1,9}$/.test(text) ? Number(text) * 1000 : 0;
}

export function consolePrincipal(session: ConsoleSessionRecord): AuthenticatedClient {
  return {
    id: `console_${session.id}`,
    name: `${session.name} (console)`,
    scopes: CONSOLE_ROLE_SCOPES[session.role],
  };
}

export function createConsoleAuth(options: ConsoleAuthOptions): ConsoleAuth {
  const state: AuthState = {
    ...options,
    touchEvery: Math.min(TOUCH_INTERVAL_MS, Math.floor(options.idleMs / 10)),
  };
  const authenticate = (c: Context<GatewayEnv>) => authenticateSession(state, c);
  return {
    cookieName: () => cookieName(state),
    cookieOf: (c) => cookieOf(state, c),
    setCookie: (c, token, session, now) => setCookie(state, c, token, session, now),
    clearCookie: (c) => clearCookie(state, c),
    authenticate,
    checkCsrf,
    sessionBody: (session, token) => sessionBody(state, session, token),
    async middleware(c, next) {
      const result = await authenticate(c);
      if (!result.ok) return result.response;
      const refused = checkCsrf(c, result.token);
      if (refused) return refused;
      c.set("client", consolePrincipal(result.session));
      await next();
    },
  };
}

interface AuthState extends ConsoleAuthOptions {
  /** Activity is written at most this often. */
  touchEvery: number;
}

const isSecure = (state: AuthState) => state.publicUrl().startsWith("https:");
const cookieName = (state: AuthState) => (isSecure(state) ? CONSOLE_COOKIE_SECURE : CONSOLE_COOKIE);
const attributes = (state: AuthState) =>
  `Path=/; HttpOnly; SameSite=Strict${isSecure(state) ? "; Secure" : ""}`;
const cookieOf = (state: AuthState, c: Context<GatewayEnv>) => getCookie(c, cookieName(state)) || undefined;

function setCookie(
  state: AuthState,
  c: Context<GatewayEnv>,
  token: string,
  session: ConsoleSessionRecord,
  now: Date,
): void {
  // The browser forgets the cookie when the session ends anyway (its absolute end).
  const maxAge = Math.max(0, Math.floor((Date.parse(session.expires_at) - now.getTime()) / 1000));
  c.header("Set-Cookie", `${cookieName(state)}=${token}; Max-Age=${maxAge}; ${attributes(state)}`, {
    append: true,
  });
}

function clearCookie(state: AuthState, c: Context<GatewayEnv>): void {
  c.header("Set-Cookie", `${cookieName(state)}=; Max-Age=0; ${attributes(state)}`, { append: true });
}

async function authenticateSession(state: AuthState, c: Context<GatewayEnv>): Promise<ConsoleAuthResult> {
  const token = cookieOf(state, c);
  if (token === undefined) {
    return { ok: false, response: problem(c, 401, "unauthorized", "sign in to the console first") };
  }
  const found = TOKEN_SHAPE.test(token) ? await state.store.findSession(token) : undefined;
  const now = state.now();
  if (!found || consoleSessionState(found, now, state.idleMs) !== "active") {
    clearCookie(state, c);
    return {
      ok: false,
      response: problem(c, 401, "session_expired", "the console session ended; sign in again"),
    };
  }
  // The person's last input, not the request, is the activity: the page polls by itself.
  const activeAt = new Date(now.getTime() - idleMsOf(c));
  if (activeAt.getTime() - Date.parse(found.last_seen_at) < state.touchEvery) {
    return { ok: true, session: found, token };
  }
  await state.store.touch(found.id, activeAt);
  return { ok: true, session: { ...found, last_seen_at: activeAt.toISOString() }, token };
}

function checkCsrf(c: Context<GatewayEnv>, token: string): Response | undefined {
  if (c.req.method === "GET" || c.req.method === "HEAD") return undefined;
  const sent = c.req.header(CSRF_HEADER) ?? "";
  if (safeEqual(sent, csrfTokenFor(token))) return undefined;
  return problem(c, 403, "csrf_failed", `this request needs the session's ${CSRF_HEADER} header`);
}

function sessionBody(state: AuthState, session: ConsoleSessionRecord, token: string): ConsoleSession {
  return {
    name: session.name,
    role: session.role,
    scopes: [...CONSOLE_ROLE_SCOPES[session.role]],
    csrf_token: csrfTokenFor(token),
    expires_at: session.expires_at,
    idle_expires_at: idleEnd(session, state.idleMs),
  };
}
