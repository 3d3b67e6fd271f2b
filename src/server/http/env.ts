// The Hono environment every gateway route sees: node bindings and the authenticated client.
import type { HttpBindings } from "@hono/node-server";
import type { Context } from "hono";
import type { AuthenticatedClient } from "../enrollment/service.js";

export interface GatewayEnv {
  Bindings: Partial<HttpBindings>;
  Variables: { client: AuthenticatedClient; requestId: string; clientAddress: string };
}

/** The peer address of the TCP connection (never a forwarded header). */
export function remoteAddress(c: Context<GatewayEnv>): string {
  return c.env?.incoming?.socket?.remoteAddress ?? "unknown";
}

/**
 * The address of the client, for rate limits and logs: the forwarded one from a trusted proxy (set by
 * `clientAddressMiddleware`), else the TCP peer.
 */
export function clientAddress(c: Context<GatewayEnv>): string {
  return (c.get("clientAddress") as string | undefined) ?? remoteAddress(c);
}
