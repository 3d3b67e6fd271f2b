// POST /oauth/token (authorization code + PKCE, refresh rotation with family revocation on reuse, grants with an
// absolute lifetime) and POST /oauth/revoke (RFC 7009).
import type { Context } from "hono";
import { Hono } from "hono";
import type { Logger } from "../../shared/logger.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import type { GatewayEnv } from "../http/env.js";
import type { AuthorizationCode, Grant, OAuthStore, TokenRecord } from "./store.js";
import { type TokenFailure, tokenFailureResponse } from "./token-failure.js";
import { parseScopes, sameResource, verifyPkce } from "./validate.js";

export const ACCESS_TTL_MS = 3_600_000;
export const REFRESH_TTL_MS = 30 * 86_400_000;
/** Default absolute lifetime of a grant (its refresh family): rotation cannot extend it. */
export const REFRESH_FAMILY_TTL_MS = 90 * 86_400_000;

export interface TokenRoutesDeps {
  store: OAuthStore;
  logger: Logger;
  now: () => Date;
  /** Absolute lifetime of a refresh family from its code exchange. */
  refreshFamilyTtlMs: number;
}

export function createTokenRoutes(deps: TokenRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.post("/oauth/token", (c) => token(c, deps));
  app.post("/oauth/revoke", (c) => revoke(c, deps));
  return app;
}

type TokenContext = Context<GatewayEnv>;
type Field = (name: string) => string | undefined;

/** One wire error per reason; the real reason stays in the server's log. */
function fail(c: TokenContext, deps: TokenRoutesDeps, reason: TokenFailure, clientId?: string): Response {
  const wire = tokenFailureResponse(reason);
  deps.logger.warn("oauth token request refused", { reason, ...(clientId ? { client_id: clientId } : {}) });
  return c.json(wire.body, wire.status);
}

interface NewTokensInput {
  client_id: string;
  scopes: string[];
  resource: string;
  family: string;
  grantExpiresAt: string;
  code_sha256: string | null;
}

/** Tokens never outlive their grant: the records to store and the response that carries the secrets. */
function newTokens(input: NewTokensInput, now: Date) {
  const access = newSecret("ivoai_at_");
  const refresh = newSecret("ivoai_rt_");
  const at = now.getTime();
  const grantEnd = Date.parse(input.grantExpiresAt);
  const accessEnd = Math.min(at + ACCESS_TTL_MS, grantEnd);
  const records: TokenRecord[] = (
    [
      [access, "access", accessEnd],
      [refresh, "refresh", Math.min(at + REFRESH_TTL_MS, grantEnd)],
    ] as const
  ).map(([token, kind, end]) => ({
    token_sha256: sha256Hex(token),
    kind,
    family: input.family,
    client_id: input.client_id,
    scopes: input.scopes,
    resource: input.resource,
    expires_at: new Date(end).toISOString(),
    revoked_at: null,
    used_at: null,
    code_sha256: input.code_sha256,
  }));
  return {
    records,
    response: {
      access_token: access,
      token_type: "Bearer",
      expires_in: Math.max(1, Math.floor((accessEnd - at) / 1000)),
      refresh_token: refresh,
      scope: input.scopes.join(" "),
    },
  };
}

/** POST /oauth/token: reads the form and the client, then hands over to the grant type's exchange. */
async function token(c: TokenContext, deps: TokenRoutesDeps): Promise<Response> {
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded/i.test(type)) return fail(c, deps, "bad_content_type");
  let form: Record<string, unknown>;
  try {
    form = await c.req.parseBody();
  } catch {
    return fail(c, deps, "malformed_body");
  }
  const field: Field = (name) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
  const clientId = field("client_id");
  const client = clientId ? await deps.store.getClient(clientId) : undefined;
  if (!client) return fail(c, deps, "unknown_client");
  const exchange = { c, deps, field, clientId: client.client_id, at: deps.now().toISOString() };
  const grant = field("grant_type");
  if (grant === "authorization_code") return exchangeCode(exchange);
  if (grant === "refresh_token") return exchangeRefreshToken(exchange);
  return fail(c, deps, "unsupported_grant_type", client.client_id);
}

interface Exchange {
  c: TokenContext;
  deps: TokenRoutesDeps;
  field: Field;
  clientId: string;
  at: string;
}

/** grant_type=authorization_code: PKCE, the code's client, redirect and resource; a replay revokes its tokens. */
async function exchangeCode(exchange: Exchange): Promise<Response> {
  const { c, deps, field, clientId, at } = exchange;
  const code = field("code") ?? "";
  const record = await deps.store.peekCode(code);
  if (!record) return fail(c, deps, "unknown_code", clientId);
  const replayed = async () => {
    // A replayed code: refuse it and revoke everything issued from it (OAuth 2.1 §4.1.2).
    await deps.store.revokeFromCode(sha256Hex(code), at);
    return fail(c, deps, "code_replayed", clientId);
  };
  if (record.client_id === clientId && record.used_at) return replayed();
  const refused = codeRefusal(exchange, record);
  if (refused) return fail(c, deps, refused, clientId);
  // Spent only once everything matched, so a leaked code cannot be burnt by someone without the verifier;
  // the grant and its first tokens are stored in the same transaction as the spend.
  const issued = grantFromCode(exchange, code, record);
  if (!(await deps.store.redeemCode(code, at, { grant: issued.grant, tokens: issued.tokens })))
    return replayed();
  return c.json(issued.response);
}

/** Why a code (not yet used) cannot be exchanged by this request, if it cannot. */
function codeRefusal({ field, clientId, at }: Exchange, record: AuthorizationCode): TokenFailure | undefined {
  if (record.client_id !== clientId) return "code_of_other_client";
  if (record.expires_at <= at) return "code_expired";
  if (field("redirect_uri") !== record.redirect_uri) return "redirect_uri_mismatch";
  if (!verifyPkce(field("code_verifier") ?? "", record.code_challenge)) return "pkce_failed";
  const resource = field("resource");
  if (resource !== undefined && !sameResource(resource, record.resource)) return "resource_mismatch";
  return undefined;
}

/** The grant (refresh family) a code starts, with its first tokens. */
function grantFromCode({ deps, clientId, at }: Exchange, code: string, record: AuthorizationCode) {
  const family = newId("fam_");
  const expiresAt = new Date(deps.now().getTime() + deps.refreshFamilyTtlMs).toISOString();
  const grant: Grant = {
    id: family,
    client_id: clientId,
    scopes: record.scopes,
    resource: record.resource,
    created_at: at,
    expires_at: expiresAt,
    revoked_at: null,
  };
  const issued = newTokens(
    {
      client_id: clientId,
      scopes: record.scopes,
      resource: record.resource,
      family,
      grantExpiresAt: expiresAt,
      code_sha256: sha256Hex(code),
    },
    deps.now(),
  );
  return { grant, tokens: issued.records, response: issued.response };
}

/** grant_type=refresh_token: rotation within the grant's lifetime, never wider scopes; reuse ends the family. */
async function exchangeRefreshToken({ c, deps, field, clientId, at }: Exchange): Promise<Response> {
  const { store } = deps;
  const token = field("refresh_token") ?? "";
  const record = await store.getToken(token);
  if (record?.kind !== "refresh") return fail(c, deps, "unknown_refresh_token", clientId);
  if (record.client_id !== clientId) return fail(c, deps, "refresh_token_of_other_client", clientId);
  const family = await store.getGrant(record.family);
  if (!family || family.revoked_at) return fail(c, deps, "grant_revoked", clientId);
  if (family.expires_at <= at) return fail(c, deps, "grant_expired", clientId);
  if (record.revoked_at) return fail(c, deps, "refresh_token_revoked", clientId);
  if (record.expires_at <= at) return fail(c, deps, "refresh_token_expired", clientId);
  const requested = field("scope")
    ? parseScopes(field("scope"))
    : { ok: true as const, value: record.scopes };
  if (!requested.ok || requested.value.some((scope) => !record.scopes.includes(scope))) {
    return fail(c, deps, "scope_widened", clientId);
  }
  const issued = newTokens(
    {
      client_id: clientId,
      scopes: requested.value,
      resource: record.resource,
      family: record.family,
      grantExpiresAt: family.expires_at,
      code_sha256: null,
    },
    deps.now(),
  );
  const outcome = await store.rotateRefreshToken(token, at, issued.records);
  // Reuse of a rotated refresh token: the store revoked the whole family.
  if (outcome === "reused") return fail(c, deps, "refresh_token_reused", clientId);
  // The grant was revoked (or ended) by another request since it was read.
  if (outcome === "ended") return fail(c, deps, "grant_revoked", clientId);
  return c.json(issued.response);
}

/** POST /oauth/revoke (RFC 7009): always 200, whether the token was known or not. */
async function revoke(c: TokenContext, deps: TokenRoutesDeps): Promise<Response> {
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const token = typeof form.token === "string" ? form.token : "";
  const record = token ? await deps.store.getToken(token) : undefined;
  if (record) {
    const at = deps.now().toISOString();
    // Revoking a refresh token ends its family's access tokens too; an access token ends alone.
    if (record.kind === "refresh") await deps.store.revokeFamily(record.family, at);
    else await deps.store.revokeToken(token, at);
  }
  return c.body(null, 200);
}
