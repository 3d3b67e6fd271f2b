// /v1/console/session: a single-use sign-in code becomes a session cookie (POST); the page reads its session
// and CSRF token (GET) and signs out (DELETE). The cookie is the only credential these routes take.
import { Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../shared/logger.js";
import type { RateLimiter } from "../enrollment/rate-limit.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import type { ConsoleAuth } from "./session-auth.js";
import type { ConsoleStore } from "./store.js";

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
}

export function createConsoleSessionRoutes(deps: ConsoleSessionRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();

  app.post("/", async (c) => {
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
    // A browser that signs in again (a new link in a signed-in tab) leaves no older session valid behind it.
    const previous = deps.auth.cookieOf(c);
    const replaced = previous === undefined ? undefined : await deps.store.findSession(previous);
    if (replaced && !replaced.revoked_at) await deps.store.revoke(replaced.id, now);
    deps.logger.info("console session opened", {
      session_id: opened.session.id,
      role: opened.session.role,
      remote: source,
      ...(replaced ? { replaced_session_id: replaced.id } : {}),
    });
    deps.auth.setCookie(c, opened.token, opened.session, now);
    return c.json(deps.auth.sessionBody(opened.session, opened.token));
  });

  app.get("/", async (c) => {
    const result = await deps.auth.authenticate(c);
    if (!result.ok) return result.response;
    return c.json(deps.auth.sessionBody(result.session, result.token));
  });

  app.delete("/", async (c) => {
    const result = await deps.auth.authenticate(c);
    if (!result.ok) return result.response;
    const refused = deps.auth.checkCsrf(c, result.token);
    if (refused) return refused;
    await deps.store.revoke(result.session.id, deps.now());
    deps.logger.info("console session closed", { session_id: result.session.id });
    deps.auth.clearCookie(c);
    return c.body(null, 204);
  });

  return app;
}
