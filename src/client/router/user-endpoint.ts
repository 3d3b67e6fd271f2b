// The router's endpoint for one of the user's MCP servers, `/mcp/user/NAME`: the agent sees only the allowed
// tools under the server's prefix; the router holds the upstream connection and its secrets. A read-only
// capability (AUTO's workers) reaches only a server the user marked read-only.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { connectUserServer } from "../connections/user-client.js";
import { exposedToolName, type ResolvedUserServer, toolAllowed } from "../connections/user-servers.js";
import type { Access } from "./router-state.js";

export const USER_ROUTE = /^\/mcp\/user\/([a-z][a-z0-9_-]{0,31})$/;

export interface UserUpstreams {
  servers: readonly ResolvedUserServer[];
  /** The live client of `name`, connected on first use (again after a failure). */
  client(name: string): Promise<Client>;
  close(): Promise<void>;
}

export function createUserUpstreams(
  servers: readonly ResolvedUserServer[],
  options: { timeoutMs: number; env?: NodeJS.ProcessEnv },
): UserUpstreams {
  const clients = new Map<string, Promise<Client>>();
  return {
    servers,
    client(name) {
      const server = servers.find((entry) => entry.name === name);
      if (!server) return Promise.reject(new Error(`no user MCP server ${name}`));
      let pending = clients.get(name);
      if (!pending) {
        pending = connectUserServer(server, options);
        clients.set(name, pending);
        pending.catch(() => clients.delete(name));
      }
      return pending;
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.allSettled(all.map(async (pending) => (await pending).close()));
    },
  };
}

/** Whether `access` may reach `server` at all (the full capability: any; a worker's: read-only ones). */
export function userServerVisible(server: ResolvedUserServer, access: Access): boolean {
  return access === "full" || server.read_only;
}

/** Answers one MCP HTTP request to `/mcp/user/NAME` with a fresh SDK server, buffered whole. */
export async function answerUserServer(
  upstreams: UserUpstreams,
  server: ResolvedUserServer,
  request: Request,
): Promise<Response> {
  const own = new Server(
    { name: `ivoai-user-${server.name}`, version: IVOAI_VERSION },
    { capabilities: { tools: {} } },
  );
  own.setRequestHandler(ListToolsRequestSchema, async () => {
    const listed = await (await upstreams.client(server.name)).listTools();
    const tools = listed.tools
      .filter((tool) => toolAllowed(server, tool.name))
      .map((tool) => ({ ...tool, name: exposedToolName(server, tool.name) }));
    return { tools };
  });
  own.setRequestHandler(CallToolRequestSchema, async (call) => {
    const name = upstreamName(server, call.params.name);
    if (!name) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${call.params.name}`);
    const client = await upstreams.client(server.name);
    return client.callTool({ name, ...(call.params.arguments ? { arguments: call.params.arguments } : {}) });
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await own.connect(transport);
  try {
    const response = await transport.handleRequest(request);
    const body = Buffer.from(await response.arrayBuffer());
    return new Response(body.length ? body : null, { status: response.status, headers: response.headers });
  } finally {
    void own.close();
  }
}

/** The upstream name of a tool as the agent named it, when the prefix and the allow-list let it through. */
function upstreamName(server: ResolvedUserServer, exposed: string): string | undefined {
  const prefix = server.prefix ? `${server.prefix}_` : "";
  if (!exposed.startsWith(prefix)) return undefined;
  const name = exposed.slice(prefix.length);
  return toolAllowed(server, name) ? name : undefined;
}
