// The upstream pool's state as data, and the one guarded call every upstream request goes through: a
// persistent client per source and endpoint, a per-call deadline, and a per-source circuit breaker.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { endpointUrl } from "../../config/client-config.js";
import { waitAtMost } from "../../shared/timeout.js";
import { connectMcp } from "../connections/mcp-client.js";
import type { Source } from "./selection.js";

export type EndpointName = "context" | "memory";

export interface UpstreamLimits {
  deadlineMs: number;
  maxResponseBytes: number;
  /** Consecutive failures that open a source's circuit, and how long it stays open. */
  breakerThreshold: number;
  breakerCooldownMs: number;
}

export type LogListener = (
  source: Source,
  endpoint: EndpointName,
  message: LoggingMessageNotification["params"],
) => void;

/** A source's consecutive failures, and until when its circuit stays open (0: closed). */
export interface Breaker {
  count: number;
  openUntil: number;
}

/** Everything the pool holds; the functions below read and change it, the factory only wires them. */
export interface PoolState {
  readonly limits: UpstreamLimits;
  readonly headers: Record<string, string>;
  /** Connecting or connected clients, by `sourceId/endpoint`; a failed one is forgotten. */
  readonly clients: Map<string, Promise<Client>>;
  readonly logListeners: LogListener[];
  /** By source id. */
  readonly failures: Map<string, Breaker>;
  /** Set by close(): no new connection after it. */
  closed: boolean;
}

export class UpstreamError extends Error {
  constructor(
    readonly kind: "timeout" | "error" | "malformed" | "circuit_open",
    message: string,
  ) {
    super(message);
  }
}

/** A JSON-RPC error a healthy upstream answered (resource not found, unknown prompt, bad cursor). */
export class UpstreamAnswer extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** SDK errors raised by the client itself (no answer), as opposed to errors the upstream answered. */
const TRANSPORT_CODES = new Set<number>([ErrorCode.ConnectionClosed, ErrorCode.RequestTimeout]);

export function createPoolState(limits: UpstreamLimits, headers: Record<string, string>): PoolState {
  return { limits, headers, clients: new Map(), logListeners: [], failures: new Map(), closed: false };
}

/** Whether the source's circuit is open at `now`. */
export function isOpenAt(failures: ReadonlyMap<string, Breaker>, sourceId: string, now: number): boolean {
  return (failures.get(sourceId)?.openUntil ?? 0) > now;
}

/** The breaker after one more failure: it opens for the cooldown once the count reaches the threshold. */
export function nextBreaker(previous: Breaker | undefined, limits: UpstreamLimits, now: number): Breaker {
  const count = (previous?.count ?? 0) + 1;
  return { count, openUntil: count >= limits.breakerThreshold ? now + limits.breakerCooldownMs : 0 };
}

/**
 * What a failed call becomes: an answer from a healthy upstream (when the caller accepts those), or an
 * `UpstreamError` whose kind says whether the upstream spoke nonsense (malformed) or failed otherwise.
 */
export function classifyFailure(
  alias: string,
  error: unknown,
  answered: boolean,
): UpstreamAnswer | UpstreamError {
  if (answered && error instanceof McpError && !TRANSPORT_CODES.has(error.code)) {
    return new UpstreamAnswer(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
  }
  if (error instanceof UpstreamError) return error;
  const message = (error as Error).message.split("\n")[0] ?? "failed";
  const malformed =
    /JSON|parse|invalid|schema|Unexpected/i.test(message) && !/fetch failed|unreachable|ECONN/i.test(message);
  return new UpstreamError(malformed ? "malformed" : "error", `${alias}: ${message}`);
}

/** The source's client for this endpoint, connecting on first use; throws once the pool is closing. */
function clientFor(state: PoolState, source: Source, endpoint: EndpointName) {
  const key = `${source.profile.id}/${endpoint}`;
  let client = state.clients.get(key);
  if (state.closed) throw new UpstreamError("error", "the session router is stopping");
  if (!client) {
    client = connectMcp({
      url: endpointUrl(source.profile, endpoint),
      token: source.token,
      timeoutMs: state.limits.deadlineMs,
      maxResponseBytes: state.limits.maxResponseBytes,
      headers: state.headers,
    });
    state.clients.set(key, client);
    void client.then(
      (connected) =>
        connected.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
          for (const listener of state.logListeners) listener(source, endpoint, notification.params);
        }),
      () => undefined,
    );
    // A failed connection is forgotten so the next call tries afresh.
    client.catch(() => state.clients.delete(key));
  }
  return { key, client };
}

/** Rejects with a timeout `UpstreamError` after the pool's deadline; `cancel` stops the timer. */
function deadlineFor(state: PoolState, source: Source) {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new UpstreamError(
            "timeout",
            `${source.profile.alias} did not answer within ${state.limits.deadlineMs} ms`,
          ),
        ),
      state.limits.deadlineMs,
    );
  });
  return { expired, cancel: () => clearTimeout(timer) };
}

/**
 * One upstream call under the pool's rules: refused at once while the source's circuit is open, bounded by
 * the deadline, a success closing the circuit and a failure counting towards opening it and dropping the
 * session (it may be broken). With `answered`, a JSON-RPC error the upstream answered is an `UpstreamAnswer`
 * and does not count against its circuit.
 */
export async function guarded<T>(
  state: PoolState,
  source: Source,
  endpoint: EndpointName,
  use: (client: Client) => Promise<T>,
  answered = false,
): Promise<T> {
  const id = source.profile.id;
  if (isOpenAt(state.failures, id, Date.now())) {
    throw new UpstreamError("circuit_open", `${source.profile.alias} is failing; skipped until it recovers`);
  }
  const { key, client } = clientFor(state, source, endpoint);
  const deadline = deadlineFor(state, source);
  try {
    const result = await Promise.race([client.then(use), deadline.expired]);
    state.failures.delete(id);
    return result;
  } catch (error) {
    const failure = classifyFailure(source.profile.alias, error, answered);
    if (failure instanceof UpstreamAnswer) {
      state.failures.delete(id);
      throw failure;
    }
    state.failures.set(id, nextBreaker(state.failures.get(id), state.limits, Date.now()));
    // The session may be broken (killed server, corrupt stream): reconnect next time.
    state.clients.delete(key);
    void client.then((c) => c.close()).catch(() => undefined);
    throw failure;
  } finally {
    deadline.cancel();
  }
}

/** A call the upstream may not offer: without the capability it is not made, and -32601 means the same. */
export function offered<T, E>(
  state: PoolState,
  source: Source,
  endpoint: EndpointName,
  capability: keyof ServerCapabilities,
  absent: E,
  use: (client: Client) => Promise<T>,
): Promise<T | E> {
  return guarded(
    state,
    source,
    endpoint,
    async (client) => (client.getServerCapabilities()?.[capability] ? use(client) : absent),
    true,
  ).catch((error: unknown) => {
    if (error instanceof UpstreamAnswer && error.code === ErrorCode.MethodNotFound) return absent;
    throw error;
  });
}

/** Closes every upstream session, waiting at most `graceMs`; no new connection is made after this. */
export async function closePool(state: PoolState, graceMs: number): Promise<void> {
  state.closed = true;
  const all = [...state.clients.values()];
  state.clients.clear();
  await waitAtMost(
    Promise.all(all.map((client) => client.then((c) => c.close()).catch(() => undefined))),
    graceMs,
  );
}
