// The gateway's MCP endpoints against a hostile browser and a sloppy agent: DNS-rebinding Host/Origin
// refusals even with a valid bearer, and calls refused before any tool ran still reach the audit log.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCode,
  enroll,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { rawPost } from "./raw-http.js";

const post = rawPost;

describe("gateway MCP endpoints", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let bearer: string;
  let port: string;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    port = new URL(server.url).port;
    const { code } = await createCode(root);
    bearer = ((await (await enroll(server.url, code)).json()) as { credential: string }).credential;
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup();
  });

  it.each(["/v1/mcp/context", "/v1/memory/mcp"])(
    "refuses a foreign Host or Origin on %s even with a valid bearer",
    async (endpoint) => {
      const url = `${server.url}${endpoint}`;
      const auth = { authorization: `Bearer ${bearer}` };
      const evilHost = await post(url, { ...auth, host: `evil.example.com:${port}` });
      expect(evilHost.status).toBe(403);
      expect(JSON.parse(evilHost.body)).toMatchObject({ error: "forbidden_host" });
      const evilOrigin = await post(url, { ...auth, origin: "http://evil.example.com" });
      expect(evilOrigin.status).toBe(403);
      expect(JSON.parse(evilOrigin.body)).toMatchObject({ error: "forbidden_origin" });
      // The names this loopback server really answers to still work.
      expect((await post(url, auth)).status).toBe(200);
      expect((await post(url, { ...auth, host: `localhost:${port}` })).status).toBe(200);
      expect((await post(url, { ...auth, origin: server.url })).status).toBe(200);
    },
  );

  it("applies the same Host policy to every /v1 route: hooks, approvals, admin and enrollment", async () => {
    const auth = { authorization: `Bearer ${bearer}` };
    const hook = JSON.stringify({ session_id: "s", project: "p", event: "session_start", data: {} });
    for (const [route, body] of [
      ["/v1/memory", hook],
      ["/v1/approvals/apr_x/approve", "{}"],
      ["/v1/enroll", JSON.stringify({ code: "x" })],
    ] as const) {
      const evil = await post(`${server.url}${route}`, { ...auth, host: `evil.example.com:${port}` }, body);
      expect(evil.status, route).toBe(403);
      expect(JSON.parse(evil.body), route).toMatchObject({ error: "forbidden_host" });
    }
    // The same hook from the server's own name is accepted.
    expect((await post(`${server.url}/v1/memory`, auth, hook)).status).toBe(202);
  });

  it("applies the same Host policy to Web MCP (/mcp)", async () => {
    expect((await post(`${server.url}/mcp`, { host: "evil.example.com" })).status).toBe(403);
    expect((await post(`${server.url}/mcp`, {})).status).toBe(401);
  });

  it("records unknown tools and arguments failing the schema in the audit log as rejected", async () => {
    const client = new Client({ name: "sloppy-agent", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v1/mcp/context`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}`, "x-ivoai-session-id": "sess-r" } },
      }),
    );
    try {
      const unknown = await client.callTool({ name: "context_nonexistent", arguments: {} });
      expect(unknown.isError).toBe(true);
      const invalid = await client.callTool({ name: "context_search", arguments: { query: 42 } });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toMatch(/Invalid arguments for tool context_search/);
      const fine = await client.callTool({ name: "context_search", arguments: { query: "anything" } });
      expect(fine.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const audit = await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "tool_call"]);
    expect(audit.code).toBe(0);
    const events = (
      JSON.parse(audit.stdout) as {
        events: {
          tool: string;
          status: string;
          session_id: string | null;
          detail?: { rejected?: string };
        }[];
      }
    ).events.filter((event) => event.session_id === "sess-r");
    expect(events.map((event) => [event.tool, event.status, event.detail?.rejected])).toEqual([
      ["context_nonexistent", "REJECTED", "unknown_tool"],
      ["context_search", "REJECTED", "invalid_arguments"],
      ["context_search", "SUCCESS", undefined],
    ]);
  });

  it("offers documents and pages as resources on /v1/mcp/context and /v1/memory/mcp, reads audited", async () => {
    const connect = async (endpoint: string) => {
      const client = new Client({ name: "resource-browser", version: "1" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}${endpoint}`), {
          requestInit: { headers: { authorization: `Bearer ${bearer}`, "x-ivoai-session-id": "sess-res" } },
        }),
      );
      return client;
    };
    const context = await connect("/v1/mcp/context");
    const memory = await connect("/v1/memory/mcp");
    try {
      expect(context.getServerCapabilities()?.resources).toEqual({ listChanged: false });
      expect((await context.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        "ivoai://context/{source}/{+path}",
      ]);
      expect((await memory.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        "ivoai://memory/{scope}/{+path}",
      ]);
      expect(await context.listResources()).toEqual({ resources: [] });
      expect(await memory.listResources()).toEqual({ resources: [] });
      await expect(context.readResource({ uri: "ivoai://context/docs/none.md" })).rejects.toMatchObject({
        code: -32002,
      });
      await expect(context.readResource({ uri: "ivoai://context/docs/../x.md" })).rejects.toMatchObject({
        code: -32602,
      });
      // Each endpoint serves its own family only.
      await expect(memory.readResource({ uri: "ivoai://context/docs/none.md" })).rejects.toMatchObject({
        code: -32002,
      });
      expect(
        (
          await memory.complete({
            ref: { type: "ref/resource", uri: "ivoai://memory/{scope}/{+path}" },
            argument: { name: "scope", value: "" },
          })
        ).completion,
      ).toEqual({ values: [], total: 0, hasMore: false });
    } finally {
      await Promise.all([context.close(), memory.close()]);
    }
    const audit = await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "tool_call"]);
    const events = (
      JSON.parse(audit.stdout) as { events: { tool: string; status: string; session_id: string | null }[] }
    ).events.filter((event) => event.session_id === "sess-res");
    expect(events.map((event) => [event.tool, event.status])).toEqual([
      ["resources/read", "FAILED"],
      ["resources/read", "REJECTED"],
      ["resources/read", "FAILED"],
    ]);
  });
});
