// GET/POST /oauth/authorize: authorization code + PKCE S256 with resource indicators (RFC 8707) and iss (RFC 9207),
// behind a consent page gated by an activation code whose guesses are limited per request and per address.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { type Context, Hono } from "hono";
import type { Logger } from "../../shared/logger.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import { createRateLimiter, type RateLimiter } from "../enrollment/rate-limit.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import { type WireFailure, wireErrorHandler } from "../http/wire-failure.js";
import { consentPage, errorPage } from "./consent-page.js";
import { limitPerSource, mcpResource } from "./oauth-wire.js";
import type { OAuthClient, OAuthStore, PendingAuthorization } from "./store.js";
import { parseScopes, redirectMatches, sameResource } from "./validate.js";

export const CODE_TTL_MS = 5 * 60_000;
const PENDING_TTL_MS = 10 * 60_000;
/** Wrong activation codes one authorization request may take before it must be started again. */
export const ACTIVATION_GUESSES_PER_REQUEST = 5;
/** Wrong activation codes one client address may type per minute, over all its requests. */
export const ACTIVATION_GUESSES_PER_MINUTE = 10;

export interface AuthorizeRoutesDeps {
  store: OAuthStore;
  issuer: () => string;
  logger: Logger;
  now: () => Date;
  /** The open endpoints' per-address budget (shared with registration). */
  limiter: RateLimiter;
}

interface AuthorizeState extends AuthorizeRoutesDeps {
  /** Wrong activation codes on the consent form, counted per client address (failures only). */
  guesses: RateLimiter;
}

export function createAuthorizeRoutes(deps: AuthorizeRoutesDeps): Hono<GatewayEnv> {
  const state: AuthorizeState = {
    ...deps,
    guesses: createRateLimiter({ perMinute: ACTIVATION_GUESSES_PER_MINUTE }),
  };
  const app = new Hono<GatewayEnv>();
  app.get("/oauth/authorize", (c) => showConsent(c, state));
  app.post("/oauth/authorize", (c) => answerConsent(c, state));
  // A person's browser is on these pages: a failure is a page too, with the same generic text.
  app.onError(wireErrorHandler(deps.logger, renderFailurePage));
  return app;
}

type HtmlStatus = 200 | 400 | 429 | WireFailure["status"];

/**
 * Every page refuses framing. No form-action directive: browsers apply it to the redirect that follows the form
 * post, which would stop the code on its way back to the client.
 */
function html(body: string, status: HtmlStatus = 200, extra: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-frame-options": "DENY",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      ...extra,
    },
  });
}

function renderFailurePage(_c: Context<GatewayEnv>, failure: WireFailure): Response {
  return html(errorPage(failure.message), failure.status);
}

/** Errors after the client and redirect are trusted go back to the client with state and iss (RFC 9207). */
function redirectWith(
  state: AuthorizeState,
  redirectUri: string,
  params: Record<string, string | null | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries({ ...params, iss: state.issuer() }))
    if (value) url.searchParams.set(key, value);
  return url.toString();
}

/** Why a request from a trusted client and redirect is refused (error, description), if it is. */
function refusalOf(query: Record<string, string>, resource: string): [string, string] | undefined {
  if (query.response_type !== "code")
    return ["unsupported_response_type", "only response_type=code is supported"];
  if (!query.code_challenge || query.code_challenge_method !== "S256") {
    return ["invalid_request", "PKCE with code_challenge_method=S256 is required"];
  }
  if (!sameResource(query.resource, resource)) return ["invalid_target", `resource must be ${resource}`];
  return undefined;
}

/** GET /oauth/authorize: checks the request and shows the consent page. */
async function showConsent(c: Context<GatewayEnv>, state: AuthorizeState): Promise<Response> {
  const tooMany = limitPerSource(state.limiter, c);
  if (tooMany) return tooMany;
  await state.store.prune(state.now().toISOString());
  const q = c.req.query();
  const client = q.client_id ? await state.store.getClient(q.client_id) : undefined;
  // Unknown client or a redirect it did not register: an error page, never a redirect.
  if (!client)
    return html(errorPage("Unknown client. Register it first (dynamic client registration)."), 400);
  const redirectUri = q.redirect_uri;
  if (!redirectUri || !redirectMatches(client.redirect_uris, redirectUri)) {
    return html(errorPage("The redirect URI does not match one this client registered."), 400);
  }
  const back = (error: string, description: string) =>
    c.redirect(
      redirectWith(state, redirectUri, { error, error_description: description, state: q.state }),
      302,
    );
  const resource = mcpResource(state.issuer());
  const refused = refusalOf(q, resource);
  if (refused) return back(...refused);
  const scopes = parseScopes(q.scope);
  if (!scopes.ok) return back("invalid_scope", scopes.description);
  const csrf = randomBytes(32).toString("base64url");
  const pending: PendingAuthorization = {
    id: newId("ar_"),
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: q.code_challenge as string,
    resource,
    scopes: scopes.value,
    state: q.state ?? null,
    csrf_sha256: sha256Hex(csrf),
    expires_at: new Date(state.now().getTime() + PENDING_TTL_MS).toISOString(),
  };
  await state.store.addPending(pending);
  return html(consentPageOf(pending, csrf, client));
}

function consentPageOf(
  pending: PendingAuthorization,
  csrf: string,
  client: OAuthClient | undefined,
  error?: string,
) {
  return consentPage({
    requestId: pending.id,
    csrf,
    clientName: client?.client_name ?? pending.client_id,
    redirectHost: new URL(pending.redirect_uri).host,
    scopes: pending.scopes,
    ...(error ? { error } : {}),
  });
}

/** The consent page again, for a fresh request that carries the failed one's count. */
async function retryConsent(state: AuthorizeState, pending: PendingAuthorization, failedAttempts: number) {
  const retryCsrf = randomBytes(32).toString("base64url");
  const retry = {
    ...pending,
    id: newId("ar_"),
    csrf_sha256: sha256Hex(retryCsrf),
    failed_attempts: failedAttempts,
  };
  await state.store.addPending(retry);
  const client = await state.store.getClient(pending.client_id);
  const error = "That activation code is not valid (it may have expired or been used).";
  return html(consentPageOf(retry, retryCsrf, client, error), 400);
}

/** POST /oauth/authorize: the person's decision, with the activation code that allows it. */
async function answerConsent(c: Context<GatewayEnv>, state: AuthorizeState): Promise<Response> {
  let form: Record<string, unknown>;
  try {
    form = await c.req.parseBody();
  } catch {
    return html(errorPage("The form could not be read. Start again."), 400);
  }
  const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");
  const at = state.now().toISOString();
  const pending = await state.store.takePending(field("request_id"), at);
  if (!pending)
    return html(errorPage("This authorization request expired or was already answered. Start again."), 400);
  const csrf = Buffer.from(sha256Hex(field("csrf_token")), "hex");
  if (!timingSafeEqual(csrf, Buffer.from(pending.csrf_sha256, "hex"))) {
    return html(errorPage("The form could not be verified (CSRF). Start again."), 400);
  }
  if (field("decision") !== "allow") {
    const denied = {
      error: "access_denied",
      error_description: "the user denied access",
      state: pending.state,
    };
    return c.redirect(redirectWith(state, pending.redirect_uri, denied), 302);
  }
  return checkActivationCode(c, state, pending, field("activation_code").trim(), at);
}

/** An allowed request spends its activation code for an authorization code, within the guess limits. */
async function checkActivationCode(
  c: Context<GatewayEnv>,
  state: AuthorizeState,
  pending: PendingAuthorization,
  activationCode: string,
  at: string,
): Promise<Response> {
  // Guesses are bounded per request and per address before the code is even looked at.
  const source = clientAddress(c);
  const failed = pending.failed_attempts ?? 0;
  const budget = state.guesses.check(source);
  if (failed >= ACTIVATION_GUESSES_PER_REQUEST || !budget.allowed) {
    state.logger.warn("oauth activation guesses limited", { client_id: pending.client_id, remote: source });
    return html(
      errorPage("Too many wrong activation codes. Wait a minute, then start again."),
      429,
      budget.allowed ? {} : { "retry-after": String(budget.retryAfterSeconds) },
    );
  }
  if (!(await state.store.consumeActivationCode(activationCode, at))) {
    state.guesses.hit(source);
    // Answer again with a fresh request: the failed one is spent, so a guess cannot be replayed.
    return retryConsent(state, pending, failed + 1);
  }
  const code = newSecret("ivoai_ac_");
  await state.store.addCode({
    code_sha256: sha256Hex(code),
    client_id: pending.client_id,
    redirect_uri: pending.redirect_uri,
    code_challenge: pending.code_challenge,
    resource: pending.resource,
    scopes: pending.scopes,
    expires_at: new Date(state.now().getTime() + CODE_TTL_MS).toISOString(),
    used_at: null,
  });
  state.logger.info("oauth authorization granted", { client_id: pending.client_id, scopes: pending.scopes });
  return c.redirect(redirectWith(state, pending.redirect_uri, { code, state: pending.state }), 302);
}
