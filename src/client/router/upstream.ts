// One persistent MCP client per source and endpoint, with a per-call deadline and a circuit breaker.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type ListToolsResult,
  type LoggingLevel,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  McpError,
  type ReadResourceResult,
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

export interface UpstreamPool {
  callTool(
    source: Source,
    endpoint: EndpointName,
    name: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult>;
  listTools(source: Source, endpoint: EndpointName): Promise<ListToolsResult>;
  /**
   * The surface beyond tools. An upstream that does not offer the capability answers empty (list) or
   * `undefined` (read, get, complete); a JSON-RPC error it answers (not found, bad cursor) is rethrown as an
   * `UpstreamAnswer` and does not count against its circuit: the server is healthy, the thing is not there.
   */
  listResources(source: Source, endpoint: EndpointName, cursor?: string): Promise<ListResourcesResult>;
  listResourceTemplates(source: Source, endpoint: EndpointName): Promise<ListResourceTemplatesResult>;
  readResource(source: Source, endpoint: EndpointName, uri: string): Promise<ReadResourceResult | undefined>;
  listPrompts(source: Source, endpoint: EndpointName): Promise<ListPromptsResult>;
  getPrompt(
    source: Source,
    endpoint: EndpointName,
    name: string,
    args: Record<string, string>,
  ): Promise<GetPromptResult | undefined>;
  complete(
    source: Source,
    endpoint: EndpointName,
    params: CompleteRequest["params"],
  ): Promise<CompleteResult | undefined>;
  /** Sets the upstream's log level for this session; false when it offers no logging. */
  setLoggingLevel(source: Source, endpoint: EndpointName, level: LoggingLevel): Promise<boolean>;
  /** Receives every `notifications/message` an upstream sends, with the source it came from. */
  onLogMessage(
    listener: (source: Source, endpoint: EndpointName, message: LoggingMessageNotification["params"]) => void,
  ): void;
  isOpen(source: Source): boolean;
  /**
   * Closes every upstream session, waiting at most `graceMs`: a session still connecting to a stalled upstream
   * is closed when (if ever) its connection settles, and the pool makes no new connection after this.
   */
  close(graceMs: number): Promise<void>;
}

/** SDK errors raised by the client itself (no answer), as opposed to errors the upstream answered. */
const TRANSPORT_CODES = new Set<number>([ErrorCode.ConnectionClosed, ErrorCode.RequestTimeout]);

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

/** Upstream lists are followed page by page up to this many pages (templates, prompts: a handful each). */
const MAX_LIST_PAGES = 20;

export function createUpstreamPool(limits: UpstreamLimits, headers: Record<string, string>): UpstreamPool {
  const clients = new Map<string, Promise<Client>>();
  const logListeners: ((
    source: Source,
    endpoint: EndpointName,
    message: LoggingMessageNotification["params"],
  ) => void)[] = [];
  const failures = new Map<string, { count: number; openUntil: number }>();

  let closed = false;

  const clientFor = (source: Source, endpoint: EndpointName) => {
    const key = `${source.profile.id}/${endpoint}`;
    let client = clients.get(key);
    if (closed) throw new UpstreamError("error", "the session router is stopping");
    if (!client) {
      client = connectMcp({
        url: endpointUrl(source.profile, endpoint),
        token: source.token,
        timeoutMs: limits.deadlineMs,
        maxResponseBytes: limits.maxResponseBytes,
        headers,
      });
      clients.set(key, client);
      void client.then(
        (connected) =>
          connected.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
            for (const listener of logListeners) listener(source, endpoint, notification.params);
          }),
        () => undefined,
      );
      // A failed connection is forgotten so the next call tries afresh.
      client.catch(() => clients.delete(key));
    }
    return { key, client };
  };

  const guarded = async <T>(
    source: Source,
    endpoint: EndpointName,
    use: (client: Client) => Promise<T>,
    answered = false,
  ): Promise<T> => {
    const state = failures.get(source.profile.id);
    if (state && state.openUntil > Date.now()) {
      throw new UpstreamError(
        "circuit_open",
        `${source.profile.alias} is failing; skipped until it recovers`,
      );
    }
    const { key, client } = clientFor(source, endpoint);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new UpstreamError(
              "timeout",
              `${source.profile.alias} did not answer within ${limits.deadlineMs} ms`,
            ),
          ),
        limits.deadlineMs,
      );
    });
    try {
      const result = await Promise.race([client.then(use), deadline]);
      failures.delete(source.profile.id);
      return result;
    } catch (error) {
      if (answered && error instanceof McpError && !TRANSPORT_CODES.has(error.code)) {
        failures.delete(source.profile.id);
        throw new UpstreamAnswer(error.code, error.message.replace(/^MCP error -?\d+: /, ""), error.data);
      }
      const count = (failures.get(source.profile.id)?.count ?? 0) + 1;
      failures.set(source.profile.id, {
        count,
        openUntil: count >= limits.breakerThreshold ? Date.now() + limits.breakerCooldownMs : 0,
      });
      // The session may be broken (killed server, corrupt stream): reconnect next time.
      clients.delete(key);
      void client.then((c) => c.close()).catch(() => undefined);
      if (error instanceof UpstreamError) throw error;
      const message = (error as Error).message.split("\n")[0] ?? "failed";
      const malformed =
        /JSON|parse|invalid|schema|Unexpected/i.test(message) &&
        !/fetch failed|unreachable|ECONN/i.test(message);
      throw new UpstreamError(malformed ? "malformed" : "error", `${source.profile.alias}: ${message}`);
    } finally {
      clearTimeout(timer);
    }
  };

  const options = { timeout: limits.deadlineMs };
  /** A call the upstream may not offer: without the capability it is not made, and -32601 means the same. */
  const offered = <T, E>(
    source: Source,
    endpoint: EndpointName,
    capability: keyof ServerCapabilities,
    absent: E,
    use: (client: Client) => Promise<T>,
  ): Promise<T | E> =>
    guarded(
      source,
      endpoint,
      async (client) => (client.getServerCapabilities()?.[capability] ? use(client) : absent),
      true,
    ).catch((error: unknown) => {
      if (error instanceof UpstreamAnswer && error.code === ErrorCode.MethodNotFound) return absent;
      throw error;
    });

  return {
    callTool: (source, endpoint, name, args) =>
      guarded(source, endpoint, async (client) => {
        const result = await client.callTool({ name, arguments: args }, undefined, {
          timeout: limits.deadlineMs,
        });
        if (!Array.isArray(result.content))
          throw new UpstreamError("malformed", `${source.profile.alias}: result has no content`);
        return result as CallToolResult;
      }),
    listTools: (source, endpoint) =>
      guarded(source, endpoint, (client) => client.listTools(undefined, { timeout: limits.deadlineMs })),
    listResources: (source, endpoint, cursor) =>
      offered(source, endpoint, "resources", { resources: [] }, (client) =>
        client.listResources(cursor === undefined ? undefined : { cursor }, options),
      ),
    listResourceTemplates: (source, endpoint) =>
      offered(source, endpoint, "resources", { resourceTemplates: [] }, async (client) => {
        const resourceTemplates: ListResourceTemplatesResult["resourceTemplates"] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const listed = await client.listResourceTemplates(
            cursor === undefined ? undefined : { cursor },
            options,
          );
          resourceTemplates.push(...listed.resourceTemplates);
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return { resourceTemplates };
      }),
    readResource: (source, endpoint, uri) =>
      offered(source, endpoint, "resources", undefined, (client) => client.readResource({ uri }, options)),
    listPrompts: (source, endpoint) =>
      offered(source, endpoint, "prompts", { prompts: [] }, async (client) => {
        const prompts: ListPromptsResult["prompts"] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES; page++) {
          const listed = await client.listPrompts(cursor === undefined ? undefined : { cursor }, options);
          prompts.push(...listed.prompts);
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return { prompts };
      }),
    getPrompt: (source, endpoint, name, args) =>
      offered(source, endpoint, "prompts", undefined, (client) =>
        client.getPrompt({ name, arguments: args }, options),
      ),
    complete: (source, endpoint, params) =>
      offered(source, endpoint, "completions", undefined, (client) => client.complete(params, options)),
    setLoggingLevel: (source, endpoint, level) =>
      offered(source, endpoint, "logging", false, async (client) => {
        await client.setLoggingLevel(level, options);
        return true;
      }),
    onLogMessage: (listener) => {
      logListeners.push(listener);
    },
    isOpen: (source) => (failures.get(source.profile.id)?.openUntil ?? 0) > Date.now(),
    async close(graceMs) {
      closed = true;
      const all = [...clients.values()];
      clients.clear();
      await waitAtMost(
        Promise.all(all.map((client) => client.then((c) => c.close()).catch(() => undefined))),
        graceMs,
      );
    },
  };
}
