// The user's own MCP servers through the REAL official CLIs (pinned in TESTED_VERSIONS), launched by ivoai with a
// connected ivoai server: a stdio server (its secret variable from stdin, an allow-list) and a Streamable HTTP
// one (its Authorization header from stdin) appear in each CLI's own listing beside ivoai's, their tools through
// the URL each CLI was given are only the allowed ones, and neither secret is in any process's argv or in any
// file but secrets.json. A probe (test/fixtures/cli-probe.mjs) stands in front of each real CLI to look while
// ivoai's router runs.
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { TOKEN_ENV } from "../src/client/agents/inject.js";
import { writeTree } from "./context-helpers.js";
import {
  createCode,
  homeEnv,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { ensureAgentClis } from "./npm-tools.js";
import { startUserHttpServer, USER_STDIO_FIXTURE } from "./user-mcp-servers.js";

const ENV_SECRET = "env-secret-4f1c2a";
const HEADER_SECRET = "Bearer header-secret-77b3e9";
const PROBE = path.resolve("test/fixtures/cli-probe.mjs");
const REAL_BIN = path.resolve(".tmp/agent-clis/node_modules/.bin");

interface ProbeRecord {
  servers?: Record<string, { url: string; tokenVar?: string }>;
  tools?: Record<string, string[]>;
  claudeInit?: { mcp_servers: { name: string; status: string }[]; tools: string[] };
  argvHits?: string[];
  files?: { hits: string[]; scanned: number };
  secretsFileHasThem?: boolean;
  error?: string;
}

let root: string;
let cleanup: () => Promise<void>;
let env: NodeJS.ProcessEnv;
let ivoaiServer: RunningServer;
let http: Server;
let secretsFile: string;

beforeAll(async () => {
  await ensureAgentClis(TESTED_VERSIONS);
  ({ dir: root, cleanup } = await tempDir("ivoai-user-mcp-agents-"));
  const home = path.join(root, "home");
  await mkdir(home, { recursive: true });
  const probes = path.join(root, "probe-bin");
  await mkdir(probes);
  for (const name of ["codex", "claude", "opencode"]) {
    const file = path.join(probes, name);
    await writeFile(
      file,
      `#!/bin/sh\nPROBE_MODE=${name} PROBE_REAL="${path.join(REAL_BIN, name)}" exec "${process.execPath}" "${PROBE}" "$@"\n`,
    );
    await chmod(file, 0o755);
  }
  env = {
    ...homeEnv(home),
    PATH: `${probes}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
    PROBE_SECRETS: [ENV_SECRET, HEADER_SECRET.replace(/^Bearer /, "")].join(","),
    PROBE_SCAN_ROOT: root,
  };
  secretsFile = path.join(env.XDG_CONFIG_HOME ?? "", "ivoai", "secrets.json");
  env.PROBE_SECRETS_FILE = secretsFile;

  // An ivoai server, connected: the CLIs get its two servers beside the user's.
  const serverRoot = path.join(root, "server");
  const docs = path.join(root, "docs");
  await writeTree(docs, { "deploy.md": "# Deploy\n\nWe deploy with the wombat pipeline." });
  await mkdir(serverRoot);
  await initWithDocs(serverRoot, docs);
  ivoaiServer = await startServer(serverRoot);
  const { code } = await createCode(serverRoot);
  const connected = await runIvoai(
    ["connect", "server", "add", "acme", "--url", ivoaiServer.url, "--purpose", "acme", "--code-stdin"],
    { env, input: code },
  );
  expect(connected.code, connected.stderr).toBe(0);

  ({ server: http } = await startUserHttpServer(HEADER_SECRET).then(async (started) => {
    const added = await runIvoai(
      ["mcp", "add", "docs", "--url", started.url, "--header-stdin", "Authorization", "--read-only"],
      { env, input: HEADER_SECRET },
    );
    expect(added.code, added.stderr).toBe(0);
    return started;
  }));
  const tools = await runIvoai(
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
      USER_STDIO_FIXTURE,
    ],
    { env, input: ENV_SECRET },
  );
  expect(tools.code, tools.stderr).toBe(0);
}, 900_000);

afterAll(async () => {
  await ivoaiServer?.stop();
  await new Promise((resolve) => http?.close(resolve));
  await cleanup?.();
});

/** Launches `ivoai AGENT ARGS…` (the real CLI behind the probe) and returns what the probe saw. */
async function probe(agent: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<ProbeRecord> {
  const out = path.join(root, `probe-${agent}.json`);
  const result = await runIvoai([agent, ...args], {
    env: { ...env, ...extra, PROBE_OUT: out },
    timeoutMs: 180_000,
  });
  const record = await readFile(out, "utf8").then(
    (text) => JSON.parse(text) as ProbeRecord,
    () => ({ error: `no probe record (ivoai exit ${result.code}): ${result.stderr}` }),
  );
  expect(record.error, `${record.error}\nivoai stderr: ${result.stderr}`).toBeUndefined();
  return record;
}

/** What every CLI must show: ivoai's two servers and the user's two, on loopback, the bearer by variable name. */
function expectServersAndTools(record: ProbeRecord): void {
  expect(Object.keys(record.servers ?? {}).sort()).toEqual([
    "docs",
    "ivoai-context",
    "ivoai-memory",
    "tools",
  ]);
  for (const [name, server] of Object.entries(record.servers ?? {})) {
    expect(server.url, name).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(server.tokenVar, name).toBe(TOKEN_ENV);
  }
  expect(record.servers?.tools?.url).toMatch(/\/mcp\/user\/tools$/);
  // The allow-list hides delete_everything; the HTTP server has its one tool.
  expect(record.tools?.tools).toEqual(["echo", "env_seen"]);
  expect(record.tools?.docs).toEqual(["lookup"]);
  expect(record.tools?.["ivoai-context"]).toContain("context_search");
}

/** Neither secret in any argv nor in any file but secrets.json (which the probe proves holds both). */
function expectNoSecretOutside(record: ProbeRecord): void {
  expect(record.secretsFileHasThem).toBe(true);
  expect(record.argvHits).toEqual([]);
  expect(record.files?.scanned).toBeGreaterThan(10);
  expect(record.files?.hits).toEqual([]);
}

describe("the user's own MCP servers through the real agent CLIs", () => {
  it(`codex ${TESTED_VERSIONS.codex}: mcp list shows them beside ivoai's, with only the allowed tools`, async () => {
    const record = await probe("codex", ["--", "mcp", "list", "--json"]);
    expectServersAndTools(record);
    expectNoSecretOutside(record);
  }, 240_000);

  it(`opencode ${TESTED_VERSIONS.opencode}: its resolved config has them beside ivoai's`, async () => {
    const record = await probe("opencode", ["--", "debug", "config"]);
    expectServersAndTools(record);
    expectNoSecretOutside(record);
  }, 240_000);

  it(`claude ${TESTED_VERSIONS.claude}: a session connects to them and lists only the allowed tools`, async () => {
    const record = await probe("claude", ["--", "-p", "hi", "--output-format", "stream-json", "--verbose"], {
      ANTHROPIC_API_KEY: "sk-ant-not-a-real-key",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    });
    expectServersAndTools(record);
    const init = record.claudeInit;
    expect(init?.mcp_servers.map((server) => [server.name, server.status]).sort()).toEqual([
      ["docs", "connected"],
      ["ivoai-context", "connected"],
      ["ivoai-memory", "connected"],
      ["tools", "connected"],
    ]);
    const userTools = (init?.tools ?? []).filter((tool) => /^mcp__(tools|docs)__/.test(tool)).sort();
    expect(userTools).toEqual(["mcp__docs__lookup", "mcp__tools__echo", "mcp__tools__env_seen"]);
    expectNoSecretOutside(record);
  }, 240_000);
});
