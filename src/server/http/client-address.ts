// The client address every rate limit and the request log key on: the socket peer, or, when that peer is a
// trusted reverse proxy, the client it forwarded (X-Forwarded-For), so one attacker cannot lock every user out.

import { isIP } from "node:net";
import type { MiddlewareHandler } from "hono";
import { type GatewayEnv, remoteAddress } from "./env.js";
import { createCidrMatcher } from "./listener-policy.js";

/**
 * The right-most X-Forwarded-For entry that is not itself a trusted proxy, read only when the direct peer is
 * one: entries further left were written by whoever sent the request and prove nothing. When the peer is
 * not trusted, or the chain holds no usable address, the peer itself is the client.
 */
export function forwardedClientAddress(
  peer: string,
  forwardedFor: string | undefined,
  isTrusted: (address: string) => boolean,
): string {
  if (!forwardedFor || !isTrusted(peer)) return peer;
  const hops = forwardedFor.split(",");
  let last = peer;
  for (let index = hops.length - 1; index >= 0; index -= 1) {
    const text = (hops[index] ?? "").trim();
    if (text === "") return last;
    const hop = normalizeHop(text);
    // A trusted proxy wrote this entry (every entry to its right is a trusted hop): when it is not an address
    // (`unknown`, an RFC 7239 obfuscated id), it still tells its clients apart better than the proxy's own
    // address, under which every such client would share one budget.
    if (hop === undefined) return `unparsed:${text.slice(0, 64)}`;
    if (!isTrusted(hop)) return hop;
    last = hop;
  }
  return last;
}

/** An address as a proxy writes it (`1.2.3.4`, `1.2.3.4:5678`, `[::1]:80`, `::1`); undefined if it is none. */
function normalizeHop(text: string): string | undefined {
  const entry = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry)?.[1];
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(entry)?.[1];
  const address = (bracketed ?? withPort ?? entry).toLowerCase();
  return isIP(address) === 0 ? undefined : address;
}

/** Sets the request's client address once, before any limiter or the request log reads it. */
export function clientAddressMiddleware(trustedProxyCidrs: readonly string[]): MiddlewareHandler<GatewayEnv> {
  const isTrusted = trustedProxyCidrs.length > 0 ? createCidrMatcher(trustedProxyCidrs) : () => false;
  return async (c, next) => {
    c.set(
      "clientAddress",
      forwardedClientAddress(remoteAddress(c), c.req.header("x-forwarded-for"), isTrusted),
    );
    await next();
  };
}
