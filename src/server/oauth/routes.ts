// The OAuth 2.1 authorization server for Web MCP: metadata (RFC 8414, RFC 9728), dynamic client registration
// (RFC 7591), authorization code + PKCE S256 with resource indicators (RFC 8707) and iss (RFC 9207), refresh
// rotation with family revocation on reuse, revocation (RFC 7009), and a consent page gated by an activation code.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../shared/logger.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import { createRateLimiter } from "../enrollment/rate-limit.js";
import { type GatewayEnv, remoteAddress } from "../http/env.js";
import { consentPage, errorPage } from "./consent-page.js";
import type { OAuthStore } from "./store.js";
import {
  parseScopes,
  redirectMatches,
  sameResource,
  validateRedirectUri,
  verifyPkce,
  WEB_SCOPES,
} from "./validate.js";

export const ACCESS_TTL_MS = 3_600_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
export const CODE_TTL_MS = 5 * 60_000;
const PENDING_TTL_MS = 10 * 60_000;

export interface OAuthRoutesDeps {
  store: OAuthStore;
  /** Public origin, no trailing slash: the issuer. */
  issuer: () => string;
  logger: Logger;
  now?: () => Date;
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
  const html = (body: string, status: 200 | 400 = 200) =>
    new Response(body, {
      status,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "x-frame-options": "DENY",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      },
    });
  // Registration and authorization pages are open to anyone: bound per source so they cannot fill the disk.
  const limiter = createRateLimiter({ perMinute: 60 });
  const limited = (c: Context<GatewayEnv>) => {
    const budget = limiter.hit(remoteAddress(c));
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
        client_name: z.string().max(200).nullish(),
      })
      .passthrough()
      .safeParse(raw);
    if (!body.success)
      return c.json(oauthError("invalid_client_metadata", "redirect_uris must be a non-empty list"), 400);
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
    store.addClient(client);
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

  app.get("/oauth/authorize", (c) => {
    const tooMany = limited(c);
    if (tooMany) return tooMany;
    store.prune(now().toISOString());
    const q = c.req.query();
    const client = q.client_id ? store.getClient(q.client_id) : undefined;
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
    store.addPending({
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

  app.post("/oauth/authorize", async (c) => {
    const form = await c.req.parseBody();
    const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : "");
    const at = now().toISOString();
    const pending = store.takePending(field("request_id"), at);
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
    if (!store.consumeActivationCode(field("activation_code").trim(), at)) {
      // Answer again with a fresh request: the failed one is spent, so a guess cannot be replayed.
      const retryCsrf = randomBytes(32).toString("base64url");
      const retry = { ...pending, id: newId("ar_"), csrf_sha256: sha256Hex(retryCsrf) };
      store.addPending(retry);
      const client = store.getClient(pending.client_id);
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
    }
    const code = newSecret("ivoai_ac_");
    store.addCode({
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

  const issueTokens = (input: {
    client_id: string;
    scopes: string[];
    resource: string;
    family: string;
    code_sha256: string | null;
  }) => {
    const access = newSecret("ivoai_at_");
    const refresh = newSecret("ivoai_rt_");
    const at = now().getTime();
    for (const [token, kind, ttl] of [
      [access, "access", ACCESS_TTL_MS],
      [refresh, "refresh", REFRESH_TTL_MS],
    ] as const) {
      store.addToken({
        token_sha256: sha256Hex(token),
        kind,
        family: input.family,
        client_id: input.client_id,
        scopes: input.scopes,
        resource: input.resource,
        expires_at: new Date(at + ttl).toISOString(),
        revoked_at: null,
        used_at: null,
        code_sha256: input.code_sha256,
      });
    }
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_MS / 1000,
      refresh_token: refresh,
      scope: input.scopes.join(" "),
    };
  };

  app.post("/oauth/token", async (c) => {
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/x-www-form-urlencoded/i.test(type)) {
      return c.json(
        oauthError("invalid_request", "send the token request as application/x-www-form-urlencoded"),
        400,
      );
    }
    const form = await c.req.parseBody();
    const field = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
    const client = field("client_id") ? store.getClient(field("client_id") as string) : undefined;
    if (!client) return c.json(oauthError("invalid_client", "unknown client"), 401);
    const at = now().toISOString();
    const grant = field("grant_type");
    if (grant === "authorization_code") {
      const code = field("code") ?? "";
      const record = store.peekCode(code);
      if (!record || record.client_id !== client.client_id) {
        return c.json(oauthError("invalid_grant", "invalid authorization code"), 400);
      }
      const replayed = () => {
        // A replayed code: refuse it and revoke everything issued from it (OAuth 2.1 §4.1.2).
        store.revokeFromCode(sha256Hex(code), at);
        deps.logger.warn("oauth code replayed; issued tokens revoked", { client_id: client.client_id });
        return c.json(oauthError("invalid_grant", "authorization code already used"), 400);
      };
      if (record.used_at) return replayed();
      if (record.expires_at <= at)
        return c.json(oauthError("invalid_grant", "authorization code expired"), 400);
      if (field("redirect_uri") !== record.redirect_uri) {
        return c.json(oauthError("invalid_grant", "redirect_uri does not match"), 400);
      }
      if (!verifyPkce(field("code_verifier") ?? "", record.code_challenge)) {
        return c.json(oauthError("invalid_grant", "PKCE verification failed"), 400);
      }
      const resource = field("resource");
      if (resource !== undefined && !sameResource(resource, record.resource)) {
        return c.json(oauthError("invalid_target", "resource does not match the authorization"), 400);
      }
      // Spent only once everything matched, so a leaked code cannot be burnt by someone without the verifier.
      if (!store.spendCode(code, at)) return replayed();
      return c.json(
        issueTokens({
          client_id: client.client_id,
          scopes: record.scopes,
          resource: record.resource,
          family: newId("fam_"),
          code_sha256: sha256Hex(code),
        }),
      );
    }
    if (grant === "refresh_token") {
      const token = field("refresh_token") ?? "";
      const record = store.getToken(token);
      if (record?.kind !== "refresh" || record.client_id !== client.client_id) {
        return c.json(oauthError("invalid_grant", "invalid refresh token"), 400);
      }
      if (record.revoked_at || record.expires_at <= at)
        return c.json(oauthError("invalid_grant", "refresh token expired or revoked"), 400);
      const requested = field("scope")
        ? parseScopes(field("scope"))
        : { ok: true as const, value: record.scopes };
      if (!requested.ok || requested.value.some((scope) => !record.scopes.includes(scope))) {
        return c.json(oauthError("invalid_scope", "a refresh cannot widen the scopes"), 400);
      }
      if (!store.useRefreshToken(token, at)) {
        // Reuse of a rotated refresh token: the whole family is revoked.
        store.revokeFamily(record.family, at);
        deps.logger.warn("oauth refresh token reused; family revoked", { client_id: client.client_id });
        return c.json(oauthError("invalid_grant", "refresh token already used"), 400);
      }
      return c.json(
        issueTokens({
          client_id: client.client_id,
          scopes: requested.value,
          resource: record.resource,
          family: record.family,
          code_sha256: null,
        }),
      );
    }
    return c.json(oauthError("unsupported_grant_type", "use authorization_code or refresh_token"), 400);
  });

  app.post("/oauth/revoke", async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = typeof form.token === "string" ? form.token : "";
    const record = token ? store.getToken(token) : undefined;
    if (record) {
      // Revoking a refresh token ends its family's access tokens too; an access token ends alone.
      if (record.kind === "refresh") store.revokeFamily(record.family, now().toISOString());
      else store.revokeToken(token, now().toISOString());
    }
    return c.body(null, 200);
  });

  return app;
}
