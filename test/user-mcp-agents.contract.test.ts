// The user's own MCP servers through the real launchers and the real official CLIs (pinned in TESTED_VERSIONS),
// offline: `ivoai codex|claude|opencode` with the CLI's own arguments. A stdio server (its variable from stdin) and
// a Streamable HTTP server (its Authorization header from stdin) appear in each CLI's own MCP reader beside
// ivoai's servers, with only the allowed tools, and their secrets are in no process's argv and in no file under
// HOME, the XDG dirs, TMPDIR or the session's runtime dir except secrets.json (0600). A read-only AUTO worker's
// codex (AUTO's worker overrides on a real router; its turns would need a model) gets only the read-only one.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import type { Server } from "node:http";
import path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { TOKEN_ENV } from "../src/client/agents/inject.js";
import { codexMcpOverrides } from "../src/client/auto/executors/index.js";
import { openRegistry } from "../src/client/connections/registry.js";
import { enabledUserServers } from "../src/client/connections/user-servers.js";
import { startRouter } from "../src/client/router/router.js";
import { waitAtMost } from "../src/shared/timeout.js";
import { writeTree } from "./context-helpers.js";
import {
  BIN,
  connectMcp,
  createCode,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { ensureAgentClis } from "./npm-tools.js";
import { startUserHttpServer, USER_STDIO_FIXTURE } from "./user-mcp-servers.js";

const FIXTURE = USER_STDIO_FIXTURE;
const ENV_SECRET = `env-secret-${randomBytes(8).toString("hex")}`;
const HEADER_SECRET = `header-secret-${randomBytes(8).toString("hex")}`;
const SECRETS = [ENV_SECRET, HEADER_SECRET];
const IVOAI_SERVERS = ["ivoai-context", "ivoai-memory"];

const cleanups: (() => Promise<unknown>)[] = [];
let base: string;
let env: NodeJS.ProcessEnv;
let secretsFile: string;
let ivoaiServer: RunningServer;
let http: Server;

const ivoai = (args: string[], input?: string) =>
  runIvoai(args, { env, cwd: base, timeoutMs: 120_000, ...(input !== undefined ? { input } : {}) });

/** Every process's argv (NUL-separated in /proc/PID/cmdline), by pid; processes that ended meanwhile skipped. */
function processArgv(): Map<number, string> {
  const all = new Map<number, string>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      all.set(Number(entry), readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" "));
    } catch {
      // gone
    }
  }
  return all;
}

function processEnv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  } catch {
    return [];
  }
}

/** Every regular file under `dir` that contains one of `needles`. */
function filesContaining(dir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        let text: string;
        try {
          text = readFileSync(full).toString("latin1");
        } catch {
          continue;
        }
        if (needles.some((needle) => text.includes(needle))) found.push(full);
      }
    }
  };
  walk(dir);
  return found.sort();
}

/** The files under the test's HOME/XDG/TMPDIR tree holding a secret: only secrets.json, 0600, may (and does). */
function expectSecretsOnlyInSecretsFile(): void {
  expect(filesContaining(base, SECRETS)).toEqual([secretsFile]);
  for (const secret of SECRETS) expect(readFileSync(secretsFile, "utf8")).toContain(secret);
  expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
}

/**
 * While the agent runs: no argv holds a secret or the router capability. The scan can see: the stdio server the
 * router started is in it (by its script path), and that process does hold the secret, in its environment.
 * Returns the capability the agent was given (read from its environment) for a listing through the router.
 */
function expectNoSecretInArgv(): string {
  const argv = processArgv();
  const upstream = [...argv].filter(([, line]) => line.includes(FIXTURE)).map(([pid]) => pid);
  expect(upstream.length, "the router's stdio server is running").toBeGreaterThan(0);
  expect(upstream.some((pid) => processEnv(pid).includes(`USER_MCP_SECRET=${ENV_SECRET}`))).toBe(true);
  const tokens = new Set<string>();
  for (const pid of argv.keys()) {
    const vars = processEnv(pid);
    if (!vars.includes(`XDG_STATE_HOME=${env.XDG_STATE_HOME}`)) continue;
    const token = vars.find((line) => line.startsWith(`${TOKEN_ENV}=`));
    if (token) tokens.add(token.slice(TOKEN_ENV.length + 1));
  }
  expect(tokens.size, "one capability, in the agent's environment").toBe(1);
  const [capability] = [...tokens] as [string];
  const leaks = [...argv.values()].filter((line) =>
    [...SECRETS, capability].some((secret) => line.includes(secret)),
  );
  expect(leaks).toEqual([]);
  return capability;
}

/**
 * Runs `command` (e.g. ivoai with the agent's own arguments after --) with `input` lines on stdin, until its stdout prints a
 * line `wanted` accepts; then `during` runs while the agent and its router still live, and it is stopped.
 */
function untilLine<T>(
  command: string[],
  input: string[] | undefined,
  wanted: (line: string) => boolean,
  during: (line: string) => Promise<T>,
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = command as [string, ...string[]];
    const child = spawn(file, args, {
      cwd: base,
      env: { ...process.env, ...env, ...extraEnv },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // Requests stay open (an app-server reads until EOF); without any, stdin ends at once.
    if (input) child.stdin.write(input.map((line) => `${line}\n`).join(""));
    else child.stdin.end();
    let out = "";
    let err = "";
    let result: { value: T } | { error: unknown } | undefined;
    const bound = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.stderr.on("data", (chunk) => (err += chunk));
    createInterface({ input: child.stdout }).on("line", (line) => {
      out += `${line}\n`;
      if (result !== undefined || !wanted(line)) return;
      result = { error: new Error("pending") };
      during(line)
        .then(
          (value) => (result = { value }),
          (error: unknown) => (result = { error }),
        )
        .finally(() => child.kill("SIGTERM"));
    });
    child.on("close", () => {
      clearTimeout(bound);
      if (result && "value" in result) resolve(result.value);
      else if (result) reject(result.error);
      else reject(new Error(`no such line from ${command.join(" ")}; stdout: ${out}; stderr: ${err}`));
    });
  });
}

beforeAll(async () => {
  await ensureAgentClis(TESTED_VERSIONS);
  const made = await tempDir("ivoai-user-mcp-agents-");
  cleanups.push(made.cleanup);
  base = made.dir;
  env = {
    HOME: path.join(base, "home"),
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_DATA_HOME: path.join(base, "data"),
    XDG_STATE_HOME: path.join(base, "state"),
    XDG_CACHE_HOME: path.join(base, "cache"),
    TMPDIR: path.join(base, "tmp"),
    PATH: `${path.resolve(".tmp/agent-clis/node_modules/.bin")}:${process.env.PATH}`,
    // Claude offline: no login, the API nowhere; its session still starts and reports its MCP servers.
    ANTHROPIC_API_KEY: "sk-ant-not-a-real-key",
    ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  };
  for (const dir of ["HOME", "TMPDIR"] as const) await mkdir(env[dir] as string, { recursive: true });
  secretsFile = path.join(env.XDG_CONFIG_HOME as string, "ivoai", "secrets.json");

  // ivoai's own servers: one enrolled ivoai server.
  const root = await tempDir();
  const docs = await tempDir("ivoai-docs-");
  cleanups.push(root.cleanup, docs.cleanup);
  await writeTree(docs.dir, { "deploy.md": "# Deploy\n\nThe team deploys with the wombat pipeline." });
  await initWithDocs(root.dir, docs.dir);
  ivoaiServer = await startServer(root.dir);
  const { code } = await createCode(root.dir);
  const added = await ivoai(
    ["connect", "server", "add", "acme", "--url", ivoaiServer.url, "--purpose", "acme", "--code-stdin"],
    code,
  );
  expect(added.stderr).toBe("");

  // The user's: stdio with a secret variable, HTTP with a secret header, each with a tool the allow-list hides.
  // `drop_tables` is the tool docs' allow-list hides.
  let url: string;
  ({ server: http, url } = await startUserHttpServer(`Bearer ${HEADER_SECRET}`, ["lookup", "drop_tables"]));
  const stdio = await ivoai(
    [
      "mcp",
      "add",
      "tools",
      "--env-stdin",
      "USER_MCP_SECRET",
      "--allow",
      "echo",
      "--allow",
      "env_seen",
      "--",
      process.execPath,
      FIXTURE,
    ],
    ENV_SECRET,
  );
  expect(stdio.stderr).toBe("");
  const remote = await ivoai(
    [
      "mcp",
      "add",
      "docs",
      "--url",
      url,
      "--header-stdin",
      "Authorization",
      "--allow",
      "lookup",
      "--read-only",
    ],
    `Bearer ${HEADER_SECRET}`,
  );
  expect(remote.stderr).toBe("");
  expectSecretsOnlyInSecretsFile();
}, 900_000);

/** The processes (but this one) that run with the test's environment, by pid with their argv. */
function processesOfThisTest(): Map<number, string> {
  const found = new Map<number, string>();
  if (!env) return found;
  for (const [pid, argv] of processArgv())
    if (pid !== process.pid && processEnv(pid).includes(`XDG_STATE_HOME=${env.XDG_STATE_HOME}`))
      found.set(pid, argv.slice(0, 200));
  return found;
}

/** Awaits `step`; when it has not settled within `ms`, fails naming it and what still runs with the test's environment. */
async function within(name: string, ms: number, step: Promise<unknown>): Promise<void> {
  if (!(await waitAtMost(step, ms))) {
    const left = [...processesOfThisTest()].map(([pid, argv]) => `${pid}: ${argv}`);
    throw new Error(`${name}: not done after ${ms} ms; still running: ${left.join("; ") || "none"}`);
  }
  await step;
}

afterAll(async () => {
  // Each test waited for its launch's process tree to close its stdio, so nothing of the test's should be left to
  // hold the fixture's connections or the server; what is, is ended (and an ivoai left running fails the file).
  // No wait here is unbounded: CI hung in this hook once, and a bound says which step and what was still running.
  const left = processesOfThisTest();
  if (left.size > 0) console.warn(`ended what the test left running: ${[...left.values()].join("; ")}`);
  for (const pid of left.keys()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  if (ivoaiServer) {
    const stopped = ivoaiServer.stop();
    await within("the ivoai server's graceful stop", 60_000, stopped).catch(async (error: unknown) => {
      await ivoaiServer.stop("SIGKILL");
      throw error;
    });
  }
  if (http) {
    const closed = new Promise((resolve) => http.close(resolve));
    http.closeAllConnections();
    await within("the user HTTP server's close", 30_000, closed);
  }
  for (const cleanup of cleanups.reverse()) await within("removing the test's folders", 60_000, cleanup());
  const ivoaiLeft = [...left.values()].filter((argv) => argv.includes(BIN));
  expect(ivoaiLeft, `no ivoai outlives its test (all left: ${[...left.values()].join("; ")})`).toEqual([]);
}, 240_000);

/** Codex app-server's JSON-RPC: its MCP servers with their tools (answer id 1); no login needed. */
const APP_SERVER_LISTING = [
  { method: "initialize", id: 0, params: { clientInfo: { name: "ivoai-test", version: "1" } } },
  { method: "initialized" },
  { method: "mcpServerStatus/list", id: 1, params: { detail: "toolsAndAuthOnly" } },
].map((request) => JSON.stringify(request));

interface ServerStatuses {
  result: { data: { name: string; tools: Record<string, unknown> }[] };
}

/** The user servers' tools as each listing names them, sorted. */
const USER_TOOLS = { docs: ["lookup"], tools: ["echo", "env_seen"] };

describe("user MCP servers in the real agent CLIs", { timeout: 180_000 }, () => {
  it("codex: `mcp list` shows them beside ivoai's, by router URL and the capability's variable name", async () => {
    const listed = await ivoai(["codex", "--", "mcp", "list", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const servers = JSON.parse(listed.stdout) as {
      name: string;
      enabled: boolean;
      transport: { type: string; url: string; bearer_token_env_var: string; http_headers: unknown };
    }[];
    expect(servers.map((server) => server.name).sort()).toEqual(["docs", ...IVOAI_SERVERS, "tools"]);
    const origin = new URL(servers.find((s) => s.name === "ivoai-memory")?.transport.url ?? "").origin;
    for (const name of ["docs", "tools"]) {
      expect(servers.find((s) => s.name === name)).toMatchObject({
        enabled: true,
        transport: {
          type: "streamable_http",
          url: `${origin}/mcp/user/${name}`,
          bearer_token_env_var: TOKEN_ENV,
          http_headers: null,
        },
      });
    }
    expectSecretsOnlyInSecretsFile();
  });

  it("codex: its app-server lists only the allowed tools of each, while no argv holds a secret", async () => {
    const statuses = await untilLine(
      [process.execPath, BIN, "codex", "--", "app-server"],
      APP_SERVER_LISTING,
      (line) => line.startsWith('{"id":1,'),
      async (line) => {
        expectNoSecretInArgv();
        expectSecretsOnlyInSecretsFile();
        return JSON.parse(line) as ServerStatuses;
      },
    );
    const tools = Object.fromEntries(
      statuses.result.data.map((server) => [server.name, Object.keys(server.tools).sort()]),
    );
    expect(Object.keys(tools).sort()).toEqual(["docs", ...IVOAI_SERVERS, "tools"]);
    expect({ docs: tools.docs, tools: tools.tools }).toEqual(USER_TOOLS);
    expectSecretsOnlyInSecretsFile();
  });

  it("claude: a session connects them beside ivoai's with only the allowed tools; the router lists the same", async () => {
    const { init, listed } = await untilLine(
      [process.execPath, BIN, "claude", "--", "-p", "hi", "--output-format", "stream-json", "--verbose"],
      undefined,
      (line) => line.includes('"subtype":"init"'),
      async (line) => {
        const capability = expectNoSecretInArgv();
        // The session's runtime dir (mcp.json, settings.json) exists now: it is scanned too.
        const runtime = readdirSync(path.join(env.XDG_STATE_HOME as string, "ivoai", "run"));
        expect(runtime).toHaveLength(1);
        expectSecretsOnlyInSecretsFile();
        const event = JSON.parse(line) as {
          tools: string[];
          mcp_servers: { name: string; status: string }[];
        };
        // The URL and the variable the CLI was given, through the official SDK client.
        const config = JSON.parse(
          readFileSync(
            path.join(env.XDG_STATE_HOME as string, "ivoai", "run", runtime[0] ?? "", "mcp.json"),
            "utf8",
          ),
        ) as { mcpServers: Record<string, { url: string; headers: Record<string, string> }> };
        const listedTools: Record<string, string[]> = {};
        for (const name of ["docs", "tools"]) {
          const entry = config.mcpServers[name];
          expect(entry?.headers).toEqual({ Authorization: `Bearer \${${TOKEN_ENV}}` });
          const client = await connectMcp(entry?.url ?? "", capability);
          listedTools[name] = (await client.listTools()).tools.map((tool) => tool.name).sort();
          await client.close();
        }
        return { init: event, listed: listedTools };
      },
    );
    expect(init.mcp_servers.map((server) => [server.name, server.status]).sort()).toEqual([
      ["docs", "connected"],
      ["ivoai-context", "connected"],
      ["ivoai-memory", "connected"],
      ["tools", "connected"],
    ]);
    const userTools = init.tools.filter((tool) => /^mcp__(docs|tools)__/.test(tool)).sort();
    expect(userTools).toEqual(["mcp__docs__lookup", "mcp__tools__echo", "mcp__tools__env_seen"]);
    expect(init.tools.some((tool) => tool.startsWith("mcp__ivoai-memory__"))).toBe(true);
    expect(listed).toEqual(USER_TOOLS);
    expectSecretsOnlyInSecretsFile();
  });

  it("opencode: its resolved config and `mcp list` show them beside ivoai's, connected", async () => {
    const shown = await ivoai(["opencode", "--", "debug", "config"]);
    expect(shown.code, shown.stderr).toBe(0);
    const config = JSON.parse(shown.stdout) as {
      mcp: Record<string, { type: string; url: string; headers?: Record<string, string> }>;
    };
    expect(Object.keys(config.mcp).sort()).toEqual(["docs", ...IVOAI_SERVERS, "tools"]);
    const origin = new URL(config.mcp["ivoai-memory"]?.url ?? "").origin;
    for (const name of ["docs", "tools"])
      expect(config.mcp[name]).toMatchObject({ type: "remote", url: `${origin}/mcp/user/${name}` });
    const listed = await ivoai(["opencode", "--", "mcp", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the listing's colours
    const text = listed.stdout.replace(/\u001b\[[0-9;]*m/g, "");
    for (const name of ["docs", ...IVOAI_SERVERS, "tools"])
      expect(text).toMatch(new RegExp(`✓ ${name}\\s+connected`));
    expectSecretsOnlyInSecretsFile();
  });
  it("a read-only AUTO worker's codex gets only the server marked read-only; the router refuses it the other", async () => {
    // Not through `ivoai auto` (its turns need a model): AUTO's worker overrides and a real router, as AUTO starts them.
    const router = await startRouter({
      sources: [],
      userServers: await enabledUserServers(openRegistry(env)),
    });
    try {
      expect(router.userEndpoints.map((entry) => [entry.name, entry.read_only])).toEqual([
        ["docs", true],
        ["tools", false],
      ]);
      const knowledge = {
        endpoints: { memory: router.endpoints.memory, context: router.endpoints.context },
        tokenEnv: TOKEN_ENV,
        user: router.userEndpoints,
      };
      const overrides = (role: "primary" | "worker") => codexMcpOverrides({ role, knowledge, extraMcp: [] });
      const codex = path.resolve(".tmp/agent-clis/node_modules/.bin/codex");
      const listing = (role: "primary" | "worker", capability: string) =>
        untilLine(
          [codex, "--no-daemon", ...overrides(role), "app-server"],
          APP_SERVER_LISTING,
          (line) => line.startsWith('{"id":1,'),
          async (line) => {
            expect([...processArgv().values()].filter((argv) => argv.includes(capability))).toEqual([]);
            return JSON.parse(line) as ServerStatuses;
          },
          { [TOKEN_ENV]: capability },
        );
      const names = (statuses: ServerStatuses) => statuses.result.data.map((server) => server.name).sort();
      // The primary gets both (the same overrides, so the worker's missing server is the role's doing).
      expect(names(await listing("primary", router.capability))).toEqual(["docs", ...IVOAI_SERVERS, "tools"]);
      const worker = await listing("worker", router.readOnlyCapability);
      expect(names(worker)).toEqual(["docs", ...IVOAI_SERVERS]);
      expect(Object.keys(worker.result.data.find((server) => server.name === "docs")?.tools ?? {})).toEqual(
        USER_TOOLS.docs,
      );
      // Even named by URL, the worker's capability does not reach the other; the full one does.
      const tools = router.userEndpoints.find((entry) => entry.name === "tools")?.url ?? "";
      await expect(connectMcp(tools, router.readOnlyCapability)).rejects.toThrow();
      const full = await connectMcp(tools, router.capability);
      expect((await full.listTools()).tools.map((tool) => tool.name).sort()).toEqual(USER_TOOLS.tools);
      await full.close();
    } finally {
      await router.close();
    }
    expectSecretsOnlyInSecretsFile();
  });
});
