// The MCP Inspector CLI's --strict tool-schema lint against the gateway's three MCP endpoints reports nothing,
// its skills commands (list, get, --verify) accept /mcp's skill, and the official SDK client, which validates structuredContent against the listed outputSchema, accepts
// the tools' answers (success, failure and pending approval) over real HTTP.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_NAMES, TOOLS, WEB_TOOL_NAMES } from "../src/protocol/tools.js";
import {
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { ensureInspector } from "./npm-tools.js";
import { obtainTokens } from "./oauth-flow.js";

const ALL_SCOPES = "context:read,memory:read,memory:write,memory:delete";

describe("the MCP Inspector's strict schema lint", () => {
  let root: string;
  let home: string;
  const cleanups: (() => Promise<void>)[] = [];
  let server: RunningServer;
  let bearer: string;
  let inspector: { node: string; launcher: string };

  beforeAll(async () => {
    inspector = await ensureInspector();
    const made = await tempDir();
    const homeDir = await tempDir("ivoai-home-");
    cleanups.push(made.cleanup, homeDir.cleanup);
    root = made.dir;
    home = homeDir.dir;
    await initRoot(root);
    server = await startServer(root);
    bearer = await enrolledCredential(server.url, root, ALL_SCOPES);
  }, 900_000);
  afterAll(async () => {
    await server?.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  /** `inspector --cli URL --method tools/list --strict --format json`: its exit code, stdout envelope and stderr. */
  async function strictList(url: string, token: string) {
    const args = [
      inspector.launcher,
      "--cli",
      url,
      "--transport",
      "http",
      "--method",
      "tools/list",
      "--strict",
    ];
    const { stdout, stderr } = await promisify(execFile)(
      inspector.node,
      [...args, "--format", "json", "--header", `Authorization: Bearer ${token}`],
      { env: { PATH: process.env.PATH ?? "", HOME: home }, timeout: 60_000 },
    );
    return {
      envelope: JSON.parse(stdout) as { result: { tools: { name: string }[] }; schemaFindings?: unknown },
      stderr,
    };
  }

  it("reports no finding on /v1/mcp/context, /v1/memory/mcp and /mcp", async () => {
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { tokens } = await obtainTokens(server.url, code, ALL_SCOPES.replaceAll(",", " "));
    const targets = [
      ["/v1/mcp/context", bearer, TOOL_NAMES.filter((name) => TOOLS[name].scope === "context:read")],
      ["/v1/memory/mcp", bearer, TOOL_NAMES.filter((name) => TOOLS[name].scope !== "context:read")],
      ["/mcp", tokens.access_token, WEB_TOOL_NAMES],
    ] as const;
    for (const [endpoint, token, names] of targets) {
      // A finding of any severity fails: the one-line count (or the full report) is on stderr, the findings
      // in the JSON envelope; exit code 6 (an error-severity finding) fails execFile itself.
      const { envelope, stderr } = await strictList(`${server.url}${endpoint}`, token);
      expect(envelope.result.tools.map((tool) => tool.name).sort(), endpoint).toEqual([...names].sort());
      expect({ endpoint, findings: envelope.schemaFindings, stderr }).toEqual({
        endpoint,
        findings: undefined,
        stderr: "",
      });
    }
  }, 180_000);

  /** `inspector --cli URL --transport http ARGS`: stdout and stderr, or a failure that prints both and the exit code. */
  async function inspect(url: string, token: string, args: string[]) {
    const argv = [inspector.launcher, "--cli", url, "--transport", "http", ...args];
    try {
      return await promisify(execFile)(
        inspector.node,
        [...argv, "--header", `Authorization: Bearer ${token}`],
        { env: { PATH: process.env.PATH ?? "", HOME: home }, timeout: 60_000 },
      );
    } catch (error) {
      const { code, stdout, stderr } = error as { code?: unknown; stdout?: string; stderr?: string };
      throw new Error(`inspector ${args.join(" ")} exited ${String(code)}\n${stdout}\n${stderr}`);
    }
  }

  it("lists, gets and verifies the skill on /mcp through the skills extension (SEP-2640)", async () => {
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { tokens } = await obtainTokens(server.url, code, "context:read memory:read");
    const url = `${server.url}/mcp`;
    const uri = "skill://ivoai-memory-context/SKILL.md";
    const listed = await inspect(url, tokens.access_token, ["--method", "skills/list", "--format", "json"]);
    expect(JSON.parse(listed.stdout)).toMatchObject({
      result: { skills: [{ uri, frontmatter: { name: "ivoai-memory-context" } }] },
    });
    const got = await inspect(url, tokens.access_token, [
      "--method",
      "skills/get",
      "--uri",
      uri,
      "--format",
      "json",
    ]);
    expect(JSON.parse(got.stdout)).toMatchObject({ result: { skill: { uri, resources: [{ uri }] } } });
    // --verify checks the entry's conformance, reads every manifest file and compares its size and digest;
    // a failure exits 7 (or 8 when incomplete), which fails inspect() with the report printed.
    for (const args of [
      ["--method", "skills/list", "--verify"],
      ["--method", "skills/get", "--uri", uri, "--verify"],
    ]) {
      const verified = await inspect(url, tokens.access_token, args);
      expect(verified.stdout, args.join(" ")).toMatch(/"outcome":\s*"verified"/);
      expect(verified.stdout, args.join(" ")).not.toMatch(/"outcome":\s*"(failed|incomplete|unverifiable)"/);
    }
  }, 180_000);

  it("the SDK client validates each answer against the listed outputSchema and accepts it", async () => {
    const clients: Client[] = [];
    try {
      const contextClient = await connectMcp(`${server.url}/v1/mcp/context`, bearer);
      const memoryClient = await connectMcp(`${server.url}/v1/memory/mcp`, bearer, {
        "x-ivoai-project": "p",
      });
      clients.push(contextClient, memoryClient);
      // The client keeps each tool's output validator from tools/list, and checks every later call with it.
      await contextClient.listTools();
      await memoryClient.listTools();
      const calls: [Client, string, Record<string, unknown>, string][] = [
        [contextClient, "context_search", { query: "anything" }, "SUCCESS"],
        [contextClient, "context_health", {}, "SUCCESS"],
        [contextClient, "context_get_document", { document_id: "doc_00" }, "FAILED"],
        [
          memoryClient,
          "memory_write_page",
          { path: "notes/a", body: "# A\n\ntext" },
          "PENDING_HUMAN_APPROVAL",
        ],
        [memoryClient, "memory_status", {}, "SUCCESS"],
        [memoryClient, "memory_read_page", { path: "notes/none" }, "FAILED"],
      ];
      for (const [client, name, args, status] of calls) {
        const result = await client.callTool({ name, arguments: args });
        expect((result.structuredContent as { status: string }).status, name).toBe(status);
      }
    } finally {
      for (const client of clients) await client.close();
    }
  }, 120_000);
});
