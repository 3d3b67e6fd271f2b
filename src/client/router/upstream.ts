// One persistent MCP client per source and endpoint, with a per-call deadline and a circuit breaker.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { endpointUrl } from "../../config/client-config.js";
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
  isOpen(source: Source): boolean;
  close(): Promise<void>;
}

export class UpstreamError extends Error {
  constructor(
    readonly kind: "timeout" | "error" | "malformed" | "circuit_open",
    message: string,
  ) {
    super(message);
  }
}

export function createUpstreamPool(limits: UpstreamLimits, headers: Record<string, string>): UpstreamPool {
  const clients = new Map<string, Promise<Client>>();
  const failures = new Map<string, { count: number; openUntil: number }>();

  const clientFor = (source: Source, endpoint: EndpointName) => {
    const key = `${source.profile.id}/${endpoint}`;
    let client = clients.get(key);
    if (!client) {
      client = connectMcp({
        url: endpointUrl(source.profile, endpoint),
        token: source.token,
        timeoutMs: limits.deadlineMs,
        maxResponseBytes: limits.maxResponseBytes,
        headers,
      });
      clients.set(key, client);
      // A failed connection is forgotten so the next call tries afresh.
      client.catch(() => clients.delete(key));
    }
    return { key, client };
  };

  const guarded = async <T>(
    source: Source,
    endpoint: EndpointName,
    use: (client: Client) => Promise<T>,
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
    isOpen: (source) => (failures.get(source.profile.id)?.openUntil ?? 0) > Date.now(),
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((client) => client.then((c) => c.close()).catch(() => undefined)));
    },
  };
}
