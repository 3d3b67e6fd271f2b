// The OAuth 2.1 authorization server for Web MCP: metadata (RFC 8414, RFC 9728), dynamic client registration
// (RFC 7591), authorization code + PKCE S256 with resource indicators (RFC 8707) and iss (RFC 9207), and a consent
// page gated by an activation code whose guesses are limited; the token and revocation endpoints are in token-routes.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../shared/logger.js";
import { hasUnsafeCharacters } from "../../shared/terminal-text.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import { createRateLimiter } from "../enrollment/rate-limit.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import { consentPage, errorPage } from "./consent-page.js";
import type { OAuthStore, PendingAuthorization } from "./store.js";
import { createTokenRoutes, REFRESH_FAMILY_TTL_MS } from "./token-routes.js";
import { parseScopes, redirectMatches, sameResource, validateRedirectUri, WEB_SCOPES } from "./validate.js";

export const CODE_TTL_MS = 5 * 60_000;
const PENDING_TTL_MS = 10 * 60_000;
/** Wrong activation codes one authorization request may take before it must be started again. */
export const ACTIVATION_GUESSES_PER_REQUEST = 5;
/** Wrong activation codes one client address may type per minute, over all its requests. */
export const ACTIVATION_GUESSES_PER_MINUTE = 10;

export interface OAuthRoutesDeps {
  store: OAuthStore;
  /** Public origin, no trailing slash: the issuer. */
  issuer: () => string;
  logger: Logger;
  now?: () => Date;
  /** Absolute lifetime of a grant (refresh family); default 90 days. */
  refreshFamilyTtlMs?: number;
}

export const mcpResource = (issuer: string) => `${issuer}/mcp`;

export function protectedResourceMetadata(issuer: string) {
  return {
    resource: mcpResource(issuer),
    authorization_servers: [issuer],
    scopes_supported: [...WEB_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "ivoai",
  };
}

export function createOAuthRoutes(deps: OAuthRoutesDeps): Hono<GatewayEnv> {
  const now = deps.now ?? (() => new Date());
  const app = new Hono<GatewayEnv>();
  const { store } = deps;
  // Every page refuses framing. No form-action directive: browsers apply it to the redirect that follows
  // the form post, which would stop the code on its way back to the client.
  const html = (body: string, status: 200 | 400 | 429 = 200, extra: Record<string, string> = {}) =>
    new Response(body, {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "x-frame-options": "DENY",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
        ...extra,
      },
    });
  // Registration and authorization pages are open to anyone: bound per source so they cannot fill the disk.
  const limiter = createRateLimiter({ perMinute: 60 });
  // Wrong activation codes on the consent form, counted per client address (failures only).
  const guesses = createRateLimiter({ perMinute: ACTIVATION_GUESSES_PER_MINUTE });
  const limited = (c: Context<GatewayEnv>) => {
    const budget = limiter.hit(clientAddress(c));
    if (budget.allowed) return undefined;
    c.header("Retry-After", String(budget.retryAfterSeconds));
    return c.json(oauthError("slow_down", "too many requests; try again later"), 429);
  };
  const oauthError = (error: string, description: string) => ({ error, error_description: description });

  app.get("/.well-known/oauth-protected-resource/mcp", (c) =>
    c.json(protectedResourceMetadata(deps.issuer())),
  );
  app.get("/.well-known/oauth-protected-resource", (c) => c.json(protectedResourceMetadata(deps.issuer())));
  app.get("/.well-known/oauth-authorization-server", (c) => {
    const issuer = deps.issuer();
    return c.json({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      revocation_endpoint_auth_methods_supported: ["none"],
      scopes_supported: [...WEB_SCOPES],
      authorization_response_iss_parameter_supported: true,
    });
  });

  app.post("/oauth/register", async (c) => {
    const tooMany = limited(c);
    if (tooMany) return tooMany;
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json(oauthError("invalid_client_metadata", "the body is not JSON"), 400);
    }
    const body = z
      .object({
        redirect_uris: z.array(z.unknown()).min(1).max(20),
        client_name: z
          .string()
          .max(200)
          .refine((name) => !hasUnsafeCharacters(name))
          .nullish(),
      })
      .passthrough()
      .safeParse(raw);
    if (!body.success)
      return c.json(
        oauthError(
          "invalid_client_metadata",
          "redirect_uris must be a non-empty list; client_name at most 200 characters without control characters",
        ),
        400,
      );
    const uris: string[] = [];
    for (const uri of body.data.redirect_uris) {
      const checked = validateRedirectUri(uri);
      if (!checked.ok) return c.json(oauthError("invalid_redirect_uri", checked.description), 400);
      uris.push(checked.value);
    }
    const client = {
      client_id: newId("oc_"),
      client_name: body.data.client_name ?? null,
      redirect_uris: uris,
      created_at: now().toISOString(),
    };
    await store.addClient(client);
    deps.logger.info("oauth client registered", {
      client_id: client.client_id,
      client_name: client.client_name,
    });
    return c.json(
      {
        client_id: client.client_id,
        client_id_issued_at: Math.floor(now().getTime() / 1000),
        client_name: client.client_name ?? undefined,
        redirect_uris: uris,
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      201,
    );
  });

  /** Errors after the client and redirect are trusted go back to the client with state and iss (RFC 9207). */
  const redirectWith = (redirectUri: string, params: Record<string, string | null | undefined>) => {
    const url = new URL(redirectUri);
    for (const [key, value] of Object.entries({ ...params, iss: deps.issuer() }))
      if (value) url.searchParams.set(key, value);
    return url.toString();
  };

  app.get("/oauth/authorize", async (c) => {
    const tooMany = limited(c);
    if (tooMany) return tooMany;
    await store.prune(now().toISOString());
    const q = c.req.query();
    const client = q.client_id ? await store.getClient(q.client_id) : undefined;
    // Unknown client or a redirect it did not register: an error page, never a redirect.
    if (!client)
      return html(errorPage("Unknown client. Register it first (dynamic client registration)."), 400);
    if (!q.redirect_uri || !redirectMatches(client.redirect_uris, q.redirect_uri)) {
      return html(errorPage("The redirect URI does not match one this client registered."), 400);
    }
    const back = (error: string, description: string) =>
      c.redirect(
        redirectWith(q.redirect_uri as string, { error, error_description: description, state: q.state }),
        302,
      );
    if (q.response_type !== "code")
      return back("unsupported_response_type", "only response_type=code is supported");
    if (!q.code_challenge || q.code_challenge_method !== "S256") {
      return back("invalid_request", "PKCE with code_challenge_method=S256 is required");
    }
    if (!sameResource(q.resource, mcpResource(deps.issuer()))) {
      return back("invalid_target", `resource must be ${mcpResource(deps.issuer())}`);
    }
    const scopes = parseScopes(q.scope);
    if (!scopes.ok) return back("invalid_scope", scopes.description);
    const csrf = randomBytes(32).toString("base64url");
    const requestId = newId("ar_");
    await store.addPending({
      id: requestId,
      client_id: client.client_id,
      redirect_uri: q.redirect_uri,
      code_challenge: q.code_challenge,
      resource: mcpResource(deps.issuer()),
      scopes: scopes.value,
      state: q.state ?? null,
      csrf_sha256: sha256Hex(csrf),
      expires_at: new Date(now().getTime() + PENDING_TTL_MS).toISOString(),
    });
    return html(
      consentPage({
        requestId,
        csrf,
        clientName: client.client_name ?? client.client_id,
        redirectHost: new URL(q.redirect_uri).host,
        scopes: scopes.value,
      }),
    );
  });

  /** The consent page again, for a fresh request that carries the failed one's count. */
  const retryConsent = async (pending: PendingAuthorization, failedAttempts: number) => {
    const retryCsrf = randomBytes(32).toString("base64url");
    const retry = {
      ...pending,
      id: newId("ar_"),
      csrf_sha256: sha256Hex(retryCsrf),
      failed_attempts: failedAttempts,
    };
    await store.addPending(retry);
    const client = await store.getClient(pending.client_id);
    return html(
      consentPage({
        requestId: retry.id,
        csrf: retryCsrf,
        clientName: client?.client_name ?? pending.client_id,
        redirectHost: new URL(pending.redirect_uri).host,
        scopes: pending.scopes,
        error: "That activation code is not valid (it may have expired or been used).",
      }),
      400,
    );
  };

  app.post("/oauth/authorize", async (c) => {
    let form: Record<string, unknown>;
    try {
      form = await c.req.parseBody();
    } catch {
      return html(errorPage("The form could not be read. Start again."), 400);
    }
    const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");
    const at = now().toISOString();
    const pending = await store.takePending(field("request_id"), at);
    if (!pending)
      return html(errorPage("This authorization request expired or was already answered. Start again."), 400);
    const csrf = Buffer.from(sha256Hex(field("csrf_token")), "hex");
    if (!timingSafeEqual(csrf, Buffer.from(pending.csrf_sha256, "hex"))) {
      return html(errorPage("The form could not be verified (CSRF). Start again."), 400);
    }
    if (field("decision") !== "allow") {
      return c.redirect(
        redirectWith(pending.redirect_uri, {
          error: "access_denied",
          error_description: "the user denied access",
          state: pending.state,
        }),
        302,
      );
    }
    // Guesses are bounded per request and per address before the code is even looked at.
    const source = clientAddress(c);
    const failed = pending.failed_attempts ?? 0;
    const budget = guesses.check(source);
    if (failed >= ACTIVATION_GUESSES_PER_REQUEST || !budget.allowed) {
      deps.logger.warn("oauth activation guesses limited", { client_id: pending.client_id, remote: source });
      return html(
        errorPage("Too many wrong activation codes. Wait a minute, then start again."),
        429,
        budget.allowed ? {} : { "retry-after": String(budget.retryAfterSeconds) },
      );
    }
    if (!(await store.consumeActivationCode(field("activation_code").trim(), at))) {
      guesses.hit(source);
      // Answer again with a fresh request: the failed one is spent, so a guess cannot be replayed.
      return retryConsent(pending, failed + 1);
    }
    const code = newSecret("ivoai_ac_");
    await store.addCode({
      code_sha256: sha256Hex(code),
      client_id: pending.client_id,
      redirect_uri: pending.redirect_uri,
      code_challenge: pending.code_challenge,
      resource: pending.resource,
      scopes: pending.scopes,
      expires_at: new Date(now().getTime() + CODE_TTL_MS).toISOString(),
      used_at: null,
    });
    deps.logger.info("oauth authorization granted", { client_id: pending.client_id, scopes: pending.scopes });
    return c.redirect(redirectWith(pending.redirect_uri, { code, state: pending.state }), 302);
  });

  app.route(
    "/",
    createTokenRoutes({
      store,
      logger: deps.logger,
      now,
      refreshFamilyTtlMs: deps.refreshFamilyTtlMs ?? REFRESH_FAMILY_TTL_MS,
    }),
  );

  return app;
}
