// The Hono environment every gateway route sees: node bindings and the authenticated client.
import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { AuthenticatedClient } from "../enrollment/service.js";

export interface GatewayEnv {
  Bindings: Partial<HttpBindings>;
  Variables: { client: AuthenticatedClient; requestId: string };
}

/** The peer address of the TCP connection (never a forwarded header). */
export function remoteAddress(c: Context<GatewayEnv>): string {
  return c.env?.incoming?.socket?.remoteAddress ?? "unknown";
}
