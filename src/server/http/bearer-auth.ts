// Bearer credentials for /v1/*: 401 with WWW-Authenticate when unknown, 403 when a scope is missing.
import type { MiddlewareHandler } from "hono";
import type { Scope } from "../../protocol/scopes.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import type { GatewayEnv } from "./env.js";
import { problem } from "./problem.js";

export interface BearerAuthOptions {
  authenticate(credential: string): Promise<AuthenticatedClient | undefined>;
  realm?: string;
}

export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<GatewayEnv> {
  const realm = options.realm ?? "ivoai";
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header.trim());
    if (!match?.[1]) {
      c.header("WWW-Authenticate", `Bearer realm="${realm}"`);
      return problem(c, 401, "unauthorized", "a bearer credential is required");
    }
    const client = await options.authenticate(match[1]);
    if (!client) {
      c.header("WWW-Authenticate", `Bearer realm="${realm}", error="invalid_token"`);
      return problem(c, 401, "invalid_token", "the credential is unknown or revoked");
    }
    c.set("client", client);
    await next();
  };
}

export function requireScope(scope: Scope): MiddlewareHandler<GatewayEnv> {
  return async (c, next) => {
    if (!c.get("client").scopes.includes(scope)) {
      c.header("WWW-Authenticate", `Bearer error="insufficient_scope", scope="${scope}"`);
      return problem(c, 403, "insufficient_scope", `this request needs the ${scope} scope`);
    }
    await next();
  };
}
