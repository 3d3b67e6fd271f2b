// An official SDK client for one of the user's MCP servers: a stdio child with a minimal environment plus the
// server's stored variables, or Streamable HTTP with its stored headers. Secrets stay in this process's memory.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { ResolvedUserServer } from "./user-servers.js";

/** What a stdio server inherits: no credential of the parent, only the basics and its own stored values. */
const INHERITED = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "SHELL", "TERM"];

export function userServerEnv(server: ResolvedUserServer, parent: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...server.secrets.env };
}

export async function connectUserServer(
  server: ResolvedUserServer,
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string },
): Promise<Client> {
  const client = new Client({ name: "ivoai", version: IVOAI_VERSION });
  const transport =
    server.transport === "stdio"
      ? new StdioClientTransport({
          command: server.command,
          args: server.args,
          env: userServerEnv(server, options.env ?? process.env),
          stderr: "ignore",
          ...((server.cwd ?? options.cwd) ? { cwd: server.cwd ?? options.cwd } : {}),
        })
      : new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.secrets.headers },
          // Its headers are for its own origin only: a redirect is an error, never followed.
          fetch: (input, init) => fetch(input, { ...init, redirect: "error" }),
        });
  try {
    await client.connect(transport, { timeout: options.timeoutMs });
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  return client;
}
