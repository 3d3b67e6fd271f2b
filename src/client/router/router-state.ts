// The session router's state as one data record, with its limits and the two session capabilities: what the
// request handling, the upstream lifecycle and the shutdown read and change.

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { groupSources, type Source, type SourceGroup } from "./selection.js";
import type { FederatedSurface } from "./surface.js";
import type { EndpointName, UpstreamLimits, UpstreamPool } from "./upstream.js";
import type { UserUpstreams } from "./user-endpoint.js";

export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
export const MAX_UPSTREAM_RESPONSE_BYTES = 16 * 1024 * 1024;
/** close() waits this long for upstreams; a stalled one is abandoned, whatever it does (issue 27). */
export const CLOSE_GRACE_MS = 2_000;
/** Lifecycle hooks are small and must not hold the agent: a short deadline and a small answer. */
export const HOOK_TIMEOUT_MS = 2_000;
export const MAX_HOOK_RESPONSE_BYTES = 64 * 1024;

/** What a session capability allows: everything the agent's servers allow, or only read-tier tools. */
export type Access = "full" | "read";

/** A session capability: the bearer token handed out, and its SHA-256 the router compares against. */
export interface Capability {
  token: string;
  hash: Buffer;
}

export interface RouterState {
  readonly sources: readonly Source[];
  readonly limits: UpstreamLimits;
  /** Sent upstream with every request: the session's project and id. */
  readonly headers: Record<string, string>;
  readonly pool: UpstreamPool;
  readonly surface: FederatedSurface;
  /** The user's own MCP servers, each at `/mcp/user/NAME`. */
  readonly users: UserUpstreams;
  readonly full: Capability;
  readonly readOnly: Capability;
  /** Epoch ms after which neither capability is accepted. */
  readonly expiresAt: number;
  /** Set by close(): no capability is accepted after it. */
  revoked: boolean;
  /** The loopback port, once listening (the origin check needs it). */
  port: number;
  server: http.Server | undefined;
}

/** The upstream limits for a read deadline: the response cap and the breaker are fixed. */
export function limitsFor(deadlineMs: number | undefined): UpstreamLimits {
  return {
    deadlineMs: deadlineMs ?? 15_000,
    maxResponseBytes: MAX_UPSTREAM_RESPONSE_BYTES,
    breakerThreshold: 3,
    breakerCooldownMs: 30_000,
  };
}

/** The headers every upstream request carries: the session's project and id, when known. */
export function sessionHeaders(options: { project?: string; sessionId?: string }): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.project) headers["x-ivoai-project"] = options.project;
  if (options.sessionId) headers["x-ivoai-session-id"] = options.sessionId;
  return headers;
}

/** A fresh random capability (256 bits), kept as its hash. */
export function mintCapability(): Capability {
  const token = `ivoai_cap_${randomBytes(32).toString("base64url")}`;
  return { token, hash: createHash("sha256").update(token).digest() };
}

/** Which capability the Authorization header carries at `now`: "full", "read" (workers) or none. */
export function accessOf(state: RouterState, header: string | undefined, now: number): Access | undefined {
  if (state.revoked || now > state.expiresAt) return undefined;
  const token = /^Bearer (\S+)$/i.exec(header ?? "")?.[1] ?? "";
  const hash = createHash("sha256").update(token).digest();
  // Both comparisons always run: the answer's timing does not say which capability was close.
  const isFull = timingSafeEqual(hash, state.full.hash);
  const isRead = timingSafeEqual(hash, state.readOnly.hash);
  return isFull ? "full" : isRead ? "read" : undefined;
}

/** The groups serving an endpoint: sources whose profile does not turn the endpoint off. */
export function groupsFor(sources: readonly Source[], endpoint: EndpointName): SourceGroup[] {
  return groupSources(sources.filter((source) => source.profile.features[endpoint] !== false));
}
