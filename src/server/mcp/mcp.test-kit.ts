// The MCP tests' kit: requests as an MCP client sends them, a read tool to build endpoints with, a logger that
// keeps its lines, endpoints served over real HTTP with the official SDK client, and the context and memory
// services in a temp folder. One copy, used by every test of src/server/mcp/.
import { once } from "node:events";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { type ServerType, serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { z } from "zod";
import { type ServerConfig, serverConfigSchema } from "../../config/server-config.js";
import { type ServerPaths, serverPaths } from "../../config/server-paths.js";
import { createLogger, type Logger, silentLogger } from "../../shared/logger.js";
import { type ContextService, openContextService } from "../context/service.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { type MemoryService, openMemoryService } from "../memory/service.js";
import type { McpEndpoint } from "./endpoint.js";
import { defineTool, type ToolOutcome, type ToolSpec } from "./tool-spec.js";

/** The protocol version the kit's requests name unless told otherwise. */
export const PROTOCOL_VERSION = "2025-06-18";

/**
 * A POST as an MCP client sends it (Accept, Content-Type, MCP-Protocol-Version); `headers` override those, a
 * header set to null is left out. A string body is sent as it is (malformed JSON included).
 */
export function mcpPost(body: unknown, headers: Record<string, string | null> = {}): Request {
  const all: Record<string, string | null> = {
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": PROTOCOL_VERSION,
    ...headers,
  };
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: Object.fromEntries(
      Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== null),
    ),
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** An answer with its measured latencies zeroed: two runs of a call differ in those only. */
export function withoutLatency(answer: unknown): unknown {
  return JSON.parse(JSON.stringify(answer).replace(/"latency_ms":\d+/g, '"latency_ms":0'));
}

/** A JSON-RPC request message. */
export function rpcMessage(
  method: string,
  params?: unknown,
  id: string | number = 1,
): Record<string, unknown> {
  return { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) };
}

/** A JSON-RPC answer as the tests read it. */
export interface RpcAnswer<Result = Record<string, unknown>> {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: Result;
  error?: { code: number; message: string; data?: unknown };
}

/** Sends one request to an endpoint and reads its JSON answer. */
export async function rpc<Result = Record<string, unknown>>(
  endpoint: McpEndpoint,
  client: AuthenticatedClient,
  method: string,
  params?: unknown,
  requestId?: string,
): Promise<RpcAnswer<Result>> {
  const response = await endpoint(mcpPost(rpcMessage(method, params)), client, requestId);
  return (await response.json()) as RpcAnswer<Result>;
}

/** The result of one request; a JSON-RPC error fails the test, naming it. */
export async function rpcResult<Result = Record<string, unknown>>(
  endpoint: McpEndpoint,
  client: AuthenticatedClient,
  method: string,
  params?: unknown,
): Promise<Result> {
  const answer = await rpc<Result>(endpoint, client, method, params);
  if (!answer.result) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** context_search, a read tool with scope context:read: its input and what it does are the test's. */
export function searchTool(
  run: (args: { query: string }) => Promise<ToolOutcome>,
  input: z.ZodRawShape = { query: z.string().min(1) },
): ToolSpec {
  return defineTool({
    name: "context_search",
    title: "Search",
    description: "Searches.",
    tier: "read",
    scope: "context:read",
    input,
    output: z.object({ query: z.string().optional() }),
    run: (args) => run(args as { query: string }) as Promise<ToolOutcome<{ query?: string }>>,
  });
}

/** A credential holding context:read only. */
export const READER: AuthenticatedClient = { id: "cli_reader", name: "r", scopes: ["context:read"] };

/** A logger that keeps every line, and the lines of one level parsed. */
export function capturingLogger(): {
  logger: Logger;
  lines: string[];
  at(level: string): Record<string, unknown>[];
} {
  const lines: string[] = [];
  return {
    logger: createLogger({ write: (line) => lines.push(line) }),
    lines,
    at: (level) =>
      lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.level === level),
  };
}

/** An HTTP server on 127.0.0.1:0 answering with `fetch`, and its base URL. */
export async function serveHttp(
  fetch: (request: Request) => Response | Promise<Response>,
): Promise<{ base: string; close(): Promise<void> }> {
  const server: ServerType = serve({ hostname: "127.0.0.1", port: 0, fetch });
  await once(server, "listening");
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The official SDK client, connected over Streamable HTTP (with extra headers, e.g. a bearer token). */
export async function connectClient(
  url: string,
  headers: Record<string, string> = {},
  name = "mcp-test",
): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** The JSON-RPC error a request ends with (fails the test when it succeeds). */
export async function mcpFailure(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

/** The context and memory services over SQLite in a temp folder (the tools the gateway serves). */
export interface ServicesKit {
  dir: string;
  paths: ServerPaths;
  config: ServerConfig;
  context: ContextService;
  memory: MemoryService;
  close(): Promise<void>;
}

export async function openServices(
  prefix: string,
  publicUrl = "https://ai.example.com",
): Promise<ServicesKit> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  const config = serverConfigSchema.parse({ server: { public_url: publicUrl } });
  const paths = serverPaths(dir);
  await mkdir(paths.contextDir, { recursive: true });
  await mkdir(paths.memoryDir, { recursive: true });
  const context = openContextService({ paths, config, logger: silentLogger });
  const memory = await openMemoryService({ paths, config, logger: silentLogger });
  return {
    dir,
    paths,
    config,
    context,
    memory,
    close: async () => {
      await context.close();
      await memory.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
