// AUTO's executor argv against the real official CLIs pinned in TESTED_VERSIONS, offline and without a login:
// every flag is in the matching --help (and codex's own parser accepts the whole argv), and codex's config
// reader shows exactly the MCP servers and tools each role is given.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import type { TurnRequest } from "../src/client/auto/contracts.js";
import {
  buildClaudeArgs,
  buildClaudeMcpConfig,
  buildCodexArgs,
  codexMcpOverrides,
  KNOWLEDGE_SERVERS,
  readTools,
} from "../src/client/auto/executors/index.js";
import { ensureAgentClis } from "./npm-tools.js";

const run = promisify(execFile);
const DIR = path.resolve(".tmp/agent-clis");
const BIN = path.join(DIR, "node_modules/.bin");
const home = path.join(DIR, "home");
const TOKEN_ENV = "IVOAI_ROUTER_TOKEN";
// Codex warns on stderr when its home (here inside the clone) is under its temporary directory, as it is when
// the clone lives under /tmp: like a user's ~/.codex beside /tmp, codex gets a temporary folder of its own.
let codexTmp = "";
const env = () => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  TMPDIR: codexTmp,
  [TOKEN_ENV]: "not-a-real-capability",
});

const cli = async (name: string, args: string[]) => {
  try {
    const { stdout, stderr } = await run(path.join(BIN, name), args, {
      env: env(),
      cwd: home,
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, out: failure.stdout ?? "", err: failure.stderr ?? "" };
  }
};

const knowledge = {
  endpoints: { memory: "http://127.0.0.1:5555/mcp/memory", context: "http://127.0.0.1:5555/mcp/context" },
  tokenEnv: TOKEN_ENV,
};
const orchestrator = {
  name: "ivoai-orchestrator",
  command: "/usr/bin/node",
  args: ["/opt/ivoai/ivoai.mjs", "auto", "orchestrator-mcp"],
  envVars: ["IVOAI_ORCHESTRATOR_TOKEN"],
};
const request = (role: TurnRequest["role"], resumeThreadId: string | null) => ({
  role,
  cwd: "/work/project",
  model: "gpt-5.5",
  effort: "high",
  resumeThreadId,
  knowledge,
  extraMcp: [orchestrator],
  outputSchema: { type: "object" },
});
const THREAD = "0199a213-81c0-7800-8aa1-bbab2a035a53";
const VARIANTS = [
  ["primary", null],
  ["worker", null],
  ["primary", THREAD],
  ["worker", THREAD],
] as const;

/** Whether `help` documents `flag` as an option (short flags need word edges: "-s" is in "--sandbox"). */
const documents = (help: string, flag: string) =>
  new RegExp(`(^|[\\s,])${flag.replace(/[-]/g, "\\-")}([\\s,=<]|$)`, "m").test(help);
const flagsOf = (args: string[]) => args.filter((arg) => arg.startsWith("-") && arg !== "-");

describe("AUTO executors against the official CLIs", () => {
  beforeAll(async () => {
    await mkdir(home, { recursive: true });
    codexTmp = await mkdtemp(path.join(DIR, "tmp-"));
    await ensureAgentClis(TESTED_VERSIONS);
  }, 900_000);
  afterAll(async () => {
    if (codexTmp) await rm(codexTmp, { recursive: true, force: true });
  });

  it.each(VARIANTS)(
    "codex %s turn (resume %s): every flag exists where it is used and clap accepts the argv",
    async (role, resume) => {
      const args = buildCodexArgs(request(role, resume), "/tmp/schema.json");
      const execAt = args.indexOf("exec");
      const root = (await cli("codex", ["--help"])).out;
      const sub = (await cli("codex", resume ? ["exec", "resume", "--help"] : ["exec", "--help"])).out;
      for (const flag of flagsOf(args.slice(0, execAt))) expect(documents(root, flag), flag).toBe(true);
      for (const flag of flagsOf(args.slice(execAt))) expect(documents(sub, flag), flag).toBe(true);
      if (!resume) expect(sub).toContain(role === "worker" ? "read-only" : "workspace-write");
      // Clap rejects an unknown option or a bad value before it looks at --help; the positionals go.
      const positionals = resume ? 2 : 1;
      const parsed = await cli("codex", [...args.slice(0, -positionals), "--help"]);
      expect(parsed.err).toBe("");
      expect(parsed.code).toBe(0);
    },
  );

  it("codex worker config: only ivoai's knowledge servers, each with only its read tools", async () => {
    const overrides = ["--no-daemon", ...codexMcpOverrides(request("worker", null))];
    const listed = await cli("codex", [...overrides, "mcp", "list", "--json"]);
    expect(listed.code).toBe(0);
    const servers = JSON.parse(listed.out) as { name: string; transport: { type: string; url: string } }[];
    expect(servers.map((server) => [server.name, server.transport.type]).sort()).toEqual([
      ["ivoai-context", "streamable_http"],
      ["ivoai-memory", "streamable_http"],
    ]);
    for (const server of KNOWLEDGE_SERVERS) {
      const shown = await cli("codex", [...overrides, "mcp", "get", server, "--json"]);
      expect(shown.code).toBe(0);
      const config = JSON.parse(shown.out) as {
        enabled_tools: string[] | null;
        transport: { bearer_token_env_var: string };
      };
      expect(config.enabled_tools).toEqual(readTools(server));
      expect(config.enabled_tools?.some((tool) => /write|delete|feedback|promote/.test(tool))).toBe(false);
      expect(config.transport.bearer_token_env_var).toBe(TOKEN_ENV);
    }
    expect(readTools("ivoai-memory")).toContain("memory_query");
    expect(readTools("ivoai-context")).toContain("context_search");
  });

  it("codex primary config: knowledge servers with every tool, and the stdio orchestrator with its command", async () => {
    const overrides = ["--no-daemon", ...codexMcpOverrides(request("primary", null))];
    const listed = await cli("codex", [...overrides, "mcp", "list", "--json"]);
    expect(listed.code).toBe(0);
    const servers = JSON.parse(listed.out) as {
      name: string;
      transport: { type: string; command?: string; args?: string[]; env_vars?: string[] };
    }[];
    expect(servers.map((server) => server.name).sort()).toEqual([
      "ivoai-context",
      "ivoai-memory",
      "ivoai-orchestrator",
    ]);
    expect(servers.find((server) => server.name === "ivoai-orchestrator")?.transport).toMatchObject({
      type: "stdio",
      command: orchestrator.command,
      args: orchestrator.args,
      env_vars: orchestrator.envVars,
    });
    const memory = await cli("codex", [...overrides, "mcp", "get", "ivoai-memory", "--json"]);
    expect((JSON.parse(memory.out) as { enabled_tools: unknown }).enabled_tools).toBeNull();
    expect(listed.out).not.toContain("not-a-real-capability");
  });

  it.each(VARIANTS)(
    "claude %s turn (resume %s): every flag and value is in its --help",
    async (role, resume) => {
      const args = buildClaudeArgs(request(role, resume), "/run/ivoai/claude-mcp.json");
      const help = (await cli("claude", ["--help"])).out;
      for (const flag of flagsOf(args)) expect(documents(help, flag), flag).toBe(true);
      expect(args).not.toContain("--fallback-model");
      const mode = args[args.indexOf("--permission-mode") + 1] ?? "";
      expect(help).toContain(`"${mode}"`);
      expect(/--effort <level>[^(]*\(([^)]*)\)/.exec(help)?.[1]).toContain(
        args[args.indexOf("--effort") + 1],
      );
    },
  );

  it("claude MCP config: strict, the token only as a variable reference, no orchestrator for workers", () => {
    const worker = JSON.stringify(buildClaudeMcpConfig(request("worker", null)));
    const primary = buildClaudeMcpConfig(request("primary", null));
    expect(Object.keys(JSON.parse(worker).mcpServers).sort()).toEqual(["ivoai-context", "ivoai-memory"]);
    expect(worker).toContain(`Bearer \${${TOKEN_ENV}}`);
    expect(primary.mcpServers["ivoai-orchestrator"]).toEqual({
      type: "stdio",
      command: orchestrator.command,
      args: orchestrator.args,
      env: { IVOAI_ORCHESTRATOR_TOKEN: `\${IVOAI_ORCHESTRATOR_TOKEN}` },
    });
  });
});
