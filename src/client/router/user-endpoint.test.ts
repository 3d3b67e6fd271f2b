// The router's user MCP endpoints against a real stdio MCP server (the official SDK on both sides): only the
// allowed tools, under the prefix; the secret reaches the server's environment, never an argv; a worker's
// read-only capability reaches only a server marked read-only.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedUserServer } from "../connections/user-servers.js";
import { type RunningRouter, startRouter } from "./router.js";

const FIXTURE = fileURLToPath(new URL("../../../test/fixtures/user-stdio-mcp.mjs", import.meta.url));
const SECRET = "user-mcp-secret-4b9e1c";

function stdioServer(name: string, extra: Partial<ResolvedUserServer>): ResolvedUserServer {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args: [FIXTURE],
    enabled: true,
    read_only: false,
    required: false,
    secret_headers: [],
    secret_env: ["USER_MCP_SECRET"],
    secrets: { headers: {}, env: { USER_MCP_SECRET: SECRET } },
    ...extra,
  } as ResolvedUserServer;
}

let router: RunningRouter;
beforeAll(async () => {
  router = await startRouter({
    sources: [],
    userServers: [
      stdioServer("tools", { tools: ["echo", "env_seen"], prefix: "t" }),
      stdioServer("notes", { read_only: true }),
    ],
  });
});
afterAll(() => router?.close());

async function connect(name: string, capability: string): Promise<Client> {
  const endpoint = router.userEndpoints.find((entry) => entry.name === name);
  if (!endpoint) throw new Error(`no endpoint for ${name}: ${JSON.stringify(router.userEndpoints)}`);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${capability}` } },
    }),
  );
  return client;
}

function text(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as { text: string }[])[0]?.text ?? "";
}

describe("user MCP servers through the session router", () => {
  it("lists only the allowed tools under the prefix, and calls them", async () => {
    const client = await connect("tools", router.capability);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(["t_echo", "t_env_seen"]);
      expect(text(await client.callTool({ name: "t_echo", arguments: { text: "hi" } }))).toBe("echo: hi");
      expect(text(await client.callTool({ name: "t_env_seen" }))).toBe("secret present");
      await expect(client.callTool({ name: "t_delete_everything" })).rejects.toThrow(/unknown tool/);
      await expect(client.callTool({ name: "echo", arguments: { text: "x" } })).rejects.toThrow(
        /unknown tool/,
      );
    } finally {
      await client.close();
    }
  });

  it("keeps the secret out of every process's argv", () => {
    const cmdlines = readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8");
        } catch {
          return "";
        }
      });
    expect(cmdlines.some((line) => line.includes("user-stdio-mcp.mjs"))).toBe(true);
    expect(cmdlines.filter((line) => line.includes(SECRET))).toEqual([]);
  });

  it("gives a worker's read-only capability only the servers marked read-only", async () => {
    const notes = await connect("notes", router.readOnlyCapability);
    try {
      expect((await notes.listTools()).tools.map((tool) => tool.name)).toContain("echo");
    } finally {
      await notes.close();
    }
    await expect(connect("tools", router.readOnlyCapability)).rejects.toThrow(/not_found/);
    const anonymous = await fetch(router.userEndpoints[0]?.url ?? "", { method: "POST", body: "{}" });
    expect(anonymous.status).toBe(401);
  });
});
