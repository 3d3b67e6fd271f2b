// An official MCP SDK client whose HTTP goes through safeFetch (own-origin credential, no cross-origin
// redirect, deadline over the whole body, response cap).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { safeFetch } from "../../shared/safe-fetch.js";
import { IVOAI_VERSION } from "../../shared/version.js";

export interface McpClientOptions {
  url: string;
  token: string;
  timeoutMs: number;
  maxResponseBytes: number;
  /** Extra headers for every request (session id, project). */
  headers?: Record<string, string>;
}

export async function connectMcp(options: McpClientOptions): Promise<Client> {
  const origin = new URL(options.url).origin;
  const client = new Client({ name: "ivoai", version: IVOAI_VERSION });
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
      return safeFetch(
        input,
        { ...init, headers },
        {
          timeoutMs: options.timeoutMs,
          maxResponseBytes: options.maxResponseBytes,
          bearer: { origin, token: options.token },
          ...(init?.signal ? { signal: init.signal } : {}),
        },
      );
    },
  });
  await client.connect(transport, { timeout: options.timeoutMs });
  return client;
}
