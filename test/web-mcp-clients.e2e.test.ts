// Real OAuth MCP clients against /mcp: mcp-remote completes DCR + PKCE + resource through a scripted browser
// that fills the consent page, then lists the tools over its stdio bridge.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { ensureInspector, ensureNpmTools } from "./npm-tools.js";
import { obtainTokens } from "./oauth-flow.js";

const MCP_REMOTE_VERSION = "0.15.1";

describe("real OAuth clients", () => {
  let root: string;
  let home: string;
  const cleanups: (() => Promise<void>)[] = [];
  let server: RunningServer;
  let tools: string;

  beforeAll(async () => {
    tools = await ensureNpmTools("mcp-remote", { "mcp-remote": MCP_REMOTE_VERSION });
    const made = await tempDir();
    const homeDir = await tempDir("ivoai-home-");
    cleanups.push(made.cleanup, homeDir.cleanup);
    root = made.dir;
    home = homeDir.dir;
    await initRoot(root);
    server = await startServer(root);
  }, 900_000);
  afterAll(async () => {
    await server?.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  it("mcp-remote registers, authorizes with PKCE and the resource, and lists the tools", async () => {
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(tools, "node_modules/mcp-remote/dist/proxy.js"), `${server.url}/mcp`, "--allow-http"],
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        BROWSER: path.resolve("test/fixtures/scripted-browser.mjs"),
        SCRIPTED_ACTIVATION_CODE: code,
      },
      stderr: "pipe",
    });
    let log = "";
    transport.stderr?.on("data", (chunk) => (log += chunk));
    const client = new Client({ name: "via-mcp-remote", version: "1" });
    try {
      await client.connect(transport);
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(["context_search", "memory_query", "memory_write_page"]));
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- mcp-remote said:\n${log.slice(-3000)}`);
    } finally {
      await client.close();
    }
  }, 120_000);

  it("the MCP Inspector CLI lists the tools with a token obtained through the consent flow", async () => {
    const inspector = await ensureInspector();
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { tokens } = await obtainTokens(server.url, code);
    const { stdout } = await promisify(execFile)(
      inspector.node,
      [
        inspector.launcher,
        "--cli",
        `${server.url}/mcp`,
        "--transport",
        "http",
        "--method",
        "tools/list",
        "--header",
        `Authorization: Bearer ${tokens.access_token}`,
      ],
      { env: { PATH: process.env.PATH ?? "", HOME: home }, timeout: 60_000 },
    );
    const names = (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["context_search", "memory_query"]));
  }, 900_000);
});
