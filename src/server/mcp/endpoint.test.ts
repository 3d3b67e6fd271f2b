import { describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../shared/logger.js";
import type { AuditEvent, AuditLog } from "../audit/store.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { createMcpEndpoint, defineTool, type McpEndpointOptions } from "./endpoint.js";
import { mcpPost as post, READER as reader, searchTool, withoutLatency } from "./mcp.test-kit.js";

// tools/call and tools/list are answered without a per-request SDK server (the fast path); the same endpoint
// built with fastPath: false sends every request through the SDK's stateless transport. Each request is sent
// alone to both, so that each answer is compared with the SDK's own for the same request (JSON-RPC batches,
// removed in protocol 2025-06-18, play no part: batch.test.ts covers them as the legacy they are).
const recorded: AuditEvent[] = [];
const audit = { record: (event: AuditEvent) => recorded.push(event) } as unknown as AuditLog;
/** SDK servers built so far: `extend` runs once on each new per-request (or list-building) server. */
let serversBuilt = 0;
/** Times context_search ran. */
let searches = 0;
const options: McpEndpointOptions = {
  name: "test",
  instructions: "test",
  logger: silentLogger,
  audit,
  extend: () => {
    serversBuilt += 1;
  },
  tools: [
    searchTool(
      async ({ query }) => {
        searches += 1;
        return { data: { query }, text: `found ${query}` };
      },
      { query: z.string().min(1), limit: z.number().int().max(10).optional() },
    ),
    defineTool({
      name: "memory_query",
      title: "Query memory",
      description: "Queries memory.",
      tier: "read",
      scope: "memory:read",
      input: {},
      output: z.object({}),
      run: async () => ({ data: {}, text: "nothing" }),
    }),
  ],
};
const endpoint = createMcpEndpoint(options);
/** The same endpoint answering everything through the SDK: the reference the fast path must match. */
const sdkOnly = createMcpEndpoint({ ...options, fastPath: false });
const both: AuthenticatedClient = { id: "cli_both", name: "b", scopes: ["memory:read", "context:read"] };

/** The answer to one request, asked of the fast path's endpoint and of the SDK-only one. */
async function bothWays(client: AuthenticatedClient, message: Record<string, unknown>) {
  const direct = await endpoint(post(message), client);
  const sdk = await sdkOnly(post(message), client);
  expect([direct.status, sdk.status]).toEqual([200, 200]);
  expect(direct.headers.get("content-type")).toBe("application/json");
  expect(sdk.headers.get("content-type")).toBe("application/json");
  return { direct: await direct.json(), sdk: await sdk.json() };
}

describe("MCP endpoint", () => {
  it("lists exactly the tools the SDK lists, for each scope set", async () => {
    for (const client of [reader, both]) {
      const { direct, sdk } = await bothWays(client, { jsonrpc: "2.0", id: 1, method: "tools/list" });
      expect(direct).toEqual(sdk);
      const names = (direct as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
      expect(names).toEqual(client === reader ? ["context_search"] : ["context_search", "memory_query"]);
    }
  });

  it("answers tools/call and tools/list without building an SDK server per request", async () => {
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "context_search", arguments: { query: "alpha" } },
    };
    for (const client of [reader, both]) {
      // The first list of a scope set is asked of an SDK server once, then kept.
      await endpoint(post(list), client);
      const before = serversBuilt;
      const listed = await endpoint(post(list), client);
      expect(await listed.json()).toMatchObject({ id: 1, result: { tools: expect.any(Array) } });
      const called = await endpoint(post(call), client);
      expect(await called.json()).toMatchObject({ id: 2, result: { content: [{ text: "found alpha" }] } });
      expect(serversBuilt).toBe(before);
      // The count does move when the SDK answers: the same call to the SDK-only endpoint builds one server.
      await sdkOnly(post(call), client);
      expect(serversBuilt).toBe(before + 1);
    }
  });

  it("answers calls, refusals and schema failures as the SDK does, and audits every one", async () => {
    const calls = [
      { name: "context_search", arguments: { query: "alpha" } },
      { name: "context_search", arguments: { query: "" } },
      { name: "memory_query", arguments: {} },
      { name: "no_such_tool", arguments: {} },
    ];
    recorded.length = 0;
    for (const [index, params] of calls.entries()) {
      const message = { jsonrpc: "2.0", id: `c${index}`, method: "tools/call", params };
      const { direct, sdk } = await bothWays(reader, message);
      expect(withoutLatency(direct)).toEqual(withoutLatency(sdk));
    }
    expect(recorded.map((event) => event.kind === "tool_call" && [event.tool, event.status])).toEqual(
      ["SUCCESS", "REJECTED", "REJECTED", "REJECTED"].flatMap((status, index) => [
        [calls[index]?.name, status],
        [calls[index]?.name, status],
      ]),
    );
    expect(
      recorded.every((event) => event.kind === "tool_call" && event.credential_id === "cli_reader"),
    ).toBe(true);
  });

  it("leaves what the SDK's transport refuses to the SDK, and runs no tool for it", async () => {
    const call = {
      jsonrpc: "2.0",
      method: "tools/call",
      params: { name: "context_search", arguments: { query: "alpha" } },
    };
    const refused = [
      { ...call, id: "x1", extra: true },
      // 1e20 is an integer to JSON but not a safe one: the SDK's request id schema refuses it.
      { ...call, id: 1e20 },
      { jsonrpc: "2.0", id: "x3", method: "tools/list", extra: true },
      { jsonrpc: "2.0", id: "x4", method: "tools/list", params: { _meta: 5 } },
    ];
    recorded.length = 0;
    searches = 0;
    for (const message of refused) {
      const direct = await endpoint(post(message), reader);
      const sdk = await sdkOnly(post(message), reader);
      expect([direct.status, sdk.status]).toEqual([400, 400]);
      const answer = await direct.json();
      expect(answer).toEqual(await sdk.json());
      expect(answer).toEqual({
        jsonrpc: "2.0",
        error: { code: -32700, message: "Parse error: Invalid JSON-RPC message" },
        id: null,
      });
    }
    expect(searches).toBe(0);
    expect(recorded).toEqual([]);
  });

  it("answers a call or a list that throws with the SDK's JSON-RPC error, not an HTTP failure", async () => {
    // Checking this tool's arguments throws, and its input has no JSON Schema form, so listing it throws too.
    const failingOptions: McpEndpointOptions = {
      name: "failing",
      instructions: "test",
      logger: silentLogger,
      tools: [
        defineTool({
          name: "context_search",
          title: "Search",
          description: "Searches.",
          tier: "read",
          scope: "context:read",
          input: {
            query: z.string().refine(() => {
              throw new Error("the check broke");
            }),
            since: z.date().optional(),
          },
          output: z.object({}),
          run: async () => {
            searches += 1;
            return { data: {}, text: "ran" };
          },
        }),
      ],
    };
    const failing = createMcpEndpoint(failingOptions);
    const failingSdk = createMcpEndpoint({ ...failingOptions, fastPath: false });
    searches = 0;
    const messages = [
      {
        jsonrpc: "2.0",
        id: "t1",
        method: "tools/call",
        params: { name: "context_search", arguments: { query: "a" } },
      },
      { jsonrpc: "2.0", id: "t2", method: "tools/list" },
    ];
    for (const message of messages) {
      const direct = await failing(post(message), reader);
      const sdk = await failingSdk(post(message), reader);
      expect([direct.status, sdk.status]).toEqual([200, 200]);
      expect(direct.headers.get("content-type")).toBe("application/json");
      const answer = await direct.json();
      expect(answer).toEqual(await sdk.json());
      // The wire's one error policy: the server's own failure answers the generic text, never its details.
      expect(answer).toEqual({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32603, message: "MCP error -32603: the server failed to handle the request" },
      });
    }
    expect(searches).toBe(0);
  });

  it("leaves malformed requests and wrong headers to the transport's answers", async () => {
    // Missing params.name: the SDK's answer whichever way it is sent, as invalid params (-32602, not -32603).
    const invalid = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { arguments: {} } };
    const { direct, sdk } = await bothWays(reader, invalid);
    expect(direct).toEqual(sdk);
    expect(direct).toMatchObject({ id: 7, error: { code: -32602 } });
    // A tools/list the transport accepts but whose params fail the SDK's tools/list schema.
    const badCursor = { jsonrpc: "2.0", id: 8, method: "tools/list", params: { cursor: 5 } };
    const listed = await bothWays(reader, badCursor);
    expect(listed.direct).toEqual(listed.sdk);
    expect(listed.direct).toMatchObject({ id: 8, error: { code: -32602 } });
    const parse = await endpoint(post("{not json"), reader);
    expect(parse.status).toBe(400);
    expect(await parse.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32700, message: "Parse error: Invalid JSON" },
      id: null,
    });
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    expect((await endpoint(post(list, { accept: "application/json" }), reader)).status).toBe(406);
    expect((await endpoint(post(list, { "content-type": "text/plain" }), reader)).status).toBe(415);
    expect((await endpoint(post(list, { "mcp-protocol-version": "1999-01-01" }), reader)).status).toBe(400);
    const ping = await endpoint(post({ jsonrpc: "2.0", id: 2, method: "ping" }), reader);
    expect(await ping.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    const notification = await endpoint(
      post({ jsonrpc: "2.0", method: "notifications/initialized" }),
      reader,
    );
    expect(notification.status).toBe(202);
  });
});
