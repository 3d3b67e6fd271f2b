// The per-session KnowledgeRouter: a loopback MCP front for the selected ivoai servers, behind a random
// short-lived capability. Reads fan out and merge with provenance; writes go to exactly one destination.
// This file wires the parts: the state record (router-state.ts), the HTTP handling (http-handler.ts), the
// router's own MCP server (own-server.ts, tool-calls.ts, surface.ts) and the upstream pool (upstream.ts).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { waitAtMost } from "../../shared/timeout.js";
import type { ResolvedUserServer } from "../connections/user-servers.js";
import { provenanceOf } from "./federation.js";
import { listener } from "./http-handler.js";
import {
  CLOSE_GRACE_MS,
  groupsFor,
  limitsFor,
  mintCapability,
  type RouterState,
  sessionHeaders,
} from "./router-state.js";
import type { Source } from "./selection.js";
import { createFederatedSurface } from "./surface.js";
import { createUpstreamPool } from "./upstream.js";
import { createUserUpstreams } from "./user-endpoint.js";

export { CLOSE_GRACE_MS, MAX_REQUEST_BYTES, MAX_UPSTREAM_RESPONSE_BYTES } from "./router-state.js";

export interface RouterOptions {
  sources: readonly Source[];
  /** The user's own MCP servers to serve beside ivoai's, secrets resolved (kept in this process only). */
  userServers?: readonly ResolvedUserServer[];
  /** Per-source deadline for a read, response body included. */
  deadlineMs?: number;
  project?: string;
  sessionId?: string;
  /** Capability lifetime (default 24 h); the capability also dies with the router. */
  capabilityTtlMs?: number;
  /** How long close() waits for upstream sessions to close before abandoning them (default 2 s). */
  closeGraceMs?: number;
}

export interface RunningRouter {
  url: string;
  endpoints: { context: string; memory: string; hooks: string };
  /** One endpoint per user MCP server; `read_only` ones a worker's capability may reach too. */
  userEndpoints: { name: string; url: string; read_only: boolean }[];
  capability: string;
  /**
   * A second capability for AUTO's read-only workers: it lists and calls only read-tier tools (whatever the
   * worker's CLI was configured to allow) and may not post lifecycle hooks.
   */
  readOnlyCapability: string;
  expiresAt: string;
  sources: { source_id: string; alias: string; purpose: string; redundancy_group: string | null }[];
  /**
   * Revokes the capability, stops listening, drops every agent connection and closes upstream sessions, waiting
   * for those at most `closeGraceMs`: it settles in bounded time whatever the upstreams do.
   */
  close(): Promise<void>;
}

export async function startRouter(options: RouterOptions): Promise<RunningRouter> {
  const state = routerState(options);
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000 }, listener(state));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  state.server = server;
  state.port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${state.port}`;
  return {
    url,
    endpoints: { context: `${url}/mcp/context`, memory: `${url}/mcp/memory`, hooks: `${url}/hooks/memory` },
    userEndpoints: state.users.servers.map((server) => ({
      name: server.name,
      url: `${url}/mcp/user/${server.name}`,
      read_only: server.read_only,
    })),
    capability: state.full.token,
    readOnlyCapability: state.readOnly.token,
    expiresAt: new Date(state.expiresAt).toISOString(),
    sources: options.sources.map(provenanceOf),
    close: () => closeRouter(state, options.closeGraceMs ?? CLOSE_GRACE_MS),
  };
}

/** A new router's state: its upstream pool and federated surface, two fresh capabilities, not yet listening. */
function routerState(options: RouterOptions): RouterState {
  const limits = limitsFor(options.deadlineMs);
  const headers = sessionHeaders(options);
  const pool = createUpstreamPool(limits, headers);
  const surface = createFederatedSurface({
    pool,
    groupsFor: (endpoint) => groupsFor(options.sources, endpoint),
    deadlineMs: limits.deadlineMs,
  });
  return {
    sources: options.sources,
    limits,
    headers,
    pool,
    surface,
    users: createUserUpstreams(options.userServers ?? [], { timeoutMs: limits.deadlineMs }),
    full: mintCapability(),
    readOnly: mintCapability(),
    expiresAt: Date.now() + (options.capabilityTtlMs ?? 24 * 3_600_000),
    revoked: false,
    port: 0,
    server: undefined,
  };
}

/**
 * Revokes the capabilities, then drops every agent connection at once (a request still waiting on an
 * upstream never holds the close) and closes the upstream sessions, each wait bounded by `graceMs`.
 */
async function closeRouter(state: RouterState, graceMs: number): Promise<void> {
  state.revoked = true;
  const { server } = state;
  if (server) {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await waitAtMost(stopped, graceMs);
  }
  await Promise.all([state.pool.close(graceMs), waitAtMost(state.users.close(), graceMs)]);
}
