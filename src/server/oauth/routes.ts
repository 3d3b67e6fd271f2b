// The OAuth 2.1 authorization server for Web MCP: metadata (RFC 8414, RFC 9728), dynamic client registration
// (RFC 7591), the consent flow (authorize-routes) and the token and revocation endpoints (token-routes). A failure
// answers RFC 6749's error JSON through the gateway's one wire policy: an internal one never leaks its details.
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../shared/logger.js";
import { hasUnsafeCharacters } from "../../shared/terminal-text.js";
import { newId } from "../../shared/tokens.js";
import { createRateLimiter, type RateLimiter } from "../enrollment/rate-limit.js";
import type { GatewayEnv } from "../http/env.js";
import { wireErrorHandler } from "../http/wire-failure.js";
import { createAuthorizeRoutes } from "./authorize-routes.js";
import { limitPerSource, mcpResource, oauthError, renderOAuthFailure } from "./oauth-wire.js";
import type { OAuthClient, OAuthStore } from "./store.js";
import { createTokenRoutes, REFRESH_FAMILY_TTL_MS } from "./token-routes.js";
import { validateRedirectUri, WEB_SCOPES } from "./validate.js";

export {
  ACTIVATION_GUESSES_PER_MINUTE,
  ACTIVATION_GUESSES_PER_REQUEST,
  CODE_TTL_MS,
} from "./authorize-routes.js";

export interface OAuthRoutesDeps {
  store: OAuthStore;
  /** Public origin, no trailing slash: the issuer. */
  issuer: () => string;
  logger: Logger;
  now?: () => Date;
  /** Absolute lifetime of a grant (refresh family); default 90 days. */
  refreshFamilyTtlMs?: number;
}

export { mcpResource };

export function protectedResourceMetadata(issuer: string) {
  return {
    resource: mcpResource(issuer),
    authorization_servers: [issuer],
    scopes_supported: [...WEB_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "ivoai",
  };
}

/** The authorization server's metadata (RFC 8414). */
export function authorizationServerMetadata(issuer: string) {
  return {
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
  };
}

export function createOAuthRoutes(deps: OAuthRoutesDeps): Hono<GatewayEnv> {
  const now = deps.now ?? (() => new Date());
  const app = new Hono<GatewayEnv>();
  const limiter = createRateLimiter({ perMinute: 60 });
  const resourceMetadata = (c: Context<GatewayEnv>) => c.json(protectedResourceMetadata(deps.issuer()));
  app.get("/.well-known/oauth-protected-resource/mcp", resourceMetadata);
  app.get("/.well-known/oauth-protected-resource", resourceMetadata);
  app.get("/.well-known/oauth-authorization-server", (c) =>
    c.json(authorizationServerMetadata(deps.issuer())),
  );
  app.post("/oauth/register", (c) => register(c, { ...deps, now, limiter }));
  app.route("/", createAuthorizeRoutes({ ...deps, now, limiter }));
  app.route(
    "/",
    createTokenRoutes({
      store: deps.store,
      logger: deps.logger,
      now,
      refreshFamilyTtlMs: deps.refreshFamilyTtlMs ?? REFRESH_FAMILY_TTL_MS,
    }),
  );
  app.onError(wireErrorHandler(deps.logger, renderOAuthFailure));
  return app;
}

const registrationSchema = z
  .object({
    redirect_uris: z.array(z.unknown()).min(1).max(20),
    client_name: z
      .string()
      .max(200)
      .refine((name) => !hasUnsafeCharacters(name))
      .nullish(),
  })
  .passthrough();

interface RegisterDeps {
  store: OAuthStore;
  logger: Logger;
  now: () => Date;
  limiter: RateLimiter;
}

/** POST /oauth/register: dynamic client registration (RFC 7591) of a public client. */
async function register(c: Context<GatewayEnv>, deps: RegisterDeps): Promise<Response> {
  const tooMany = limitPerSource(deps.limiter, c);
  if (tooMany) return tooMany;
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return c.json(oauthError("invalid_client_metadata", "the body is not JSON"), 400);
  }
  const body = registrationSchema.safeParse(raw);
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
  const client: OAuthClient = {
    client_id: newId("oc_"),
    client_name: body.data.client_name ?? null,
    redirect_uris: uris,
    created_at: deps.now().toISOString(),
  };
  await deps.store.addClient(client);
  deps.logger.info("oauth client registered", {
    client_id: client.client_id,
    client_name: client.client_name,
  });
  return c.json(registration(client, deps.now()), 201);
}

/** The registration response (RFC 7591 §3.2.1). */
function registration(client: OAuthClient, now: Date) {
  return {
    client_id: client.client_id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: client.client_name ?? undefined,
    redirect_uris: client.redirect_uris,
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
  };
}
