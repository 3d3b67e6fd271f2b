// `ivoai mcp` on the built binary with isolated HOME/XDG dirs: a stdio server (its secret variable from stdin)
// and a Streamable HTTP server that wants an Authorization header (from stdin), each tested, listed without
// secret values, probed by doctor; a stopped server's row is unhealthy with the reason, and fails doctor when
// it is required.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runIvoai, tempDir } from "./helpers.js";
import { startUserHttpServer, USER_STDIO_FIXTURE } from "./user-mcp-servers.js";

const FIXTURE = USER_STDIO_FIXTURE;
const ENV_SECRET = "env-secret-91d2f0";
const HEADER_SECRET = "Bearer header-secret-5c7a11";

let dir: { dir: string; cleanup(): Promise<void> };
let env: NodeJS.ProcessEnv;
let http: Server;
let url: string;

beforeAll(async () => {
  dir = await tempDir("ivoai-user-mcp-");
  const base = dir.dir;
  env = {
    HOME: base,
    XDG_CONFIG_HOME: path.join(base, "config"),
    XDG_DATA_HOME: path.join(base, "data"),
    XDG_STATE_HOME: path.join(base, "state"),
    XDG_CACHE_HOME: path.join(base, "cache"),
  };
  ({ server: http, url } = await startUserHttpServer(HEADER_SECRET));
});
afterAll(async () => {
  await new Promise((resolve) => http?.close(resolve));
  await dir?.cleanup();
});

const ivoai = (args: string[], input?: string) =>
  runIvoai(args, { env, timeoutMs: 60_000, ...(input !== undefined ? { input } : {}) });

function rowsOf(stdout: string): { component: string; healthy: string; why: string; required: boolean }[] {
  return JSON.parse(stdout).matrix;
}

describe("ivoai mcp", () => {
  it("adds a stdio and an HTTP server with their secrets from stdin, never in config.toml or output", async () => {
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
        "--prefix",
        "t",
        "--",
        process.execPath,
        FIXTURE,
      ],
      ENV_SECRET,
    );
    expect(stdio.stderr).toBe("");
    expect(stdio.code).toBe(0);
    const remote = await ivoai(
      ["mcp", "add", "docs", "--url", url, "--header-stdin", "Authorization", "--read-only"],
      HEADER_SECRET,
    );
    expect(remote.code).toBe(0);

    const list = await ivoai(["mcp", "list", "--json"]);
    const servers = JSON.parse(list.stdout) as { name: string; secrets: string[]; read_only: boolean }[];
    expect(servers.map((s) => [s.name, s.secrets, s.read_only])).toEqual([
      ["docs", ["header Authorization"], true],
      ["tools", ["env USER_MCP_SECRET"], false],
    ]);
    const show = await ivoai(["mcp", "show", "docs"]);
    expect(show.stdout).toContain("header Authorization: stored");
    const config = readFileSync(path.join(env.XDG_CONFIG_HOME ?? "", "ivoai", "config.toml"), "utf8");
    const secrets = path.join(env.XDG_CONFIG_HOME ?? "", "ivoai", "secrets.json");
    for (const text of [config, list.stdout, show.stdout, stdio.stdout, remote.stdout]) {
      expect(text).not.toContain("secret-");
    }
    expect(readFileSync(secrets, "utf8")).toContain(ENV_SECRET);
    expect(statSync(secrets).mode & 0o777).toBe(0o600);
  });

  it("tests each: the allowed tools under the prefix, what the allow-list hides, the time", async () => {
    const tools = await ivoai(["mcp", "test", "tools", "--json"]);
    expect(tools.code).toBe(0);
    const probe = JSON.parse(tools.stdout);
    expect(probe).toMatchObject({
      ok: true,
      tools: ["t_echo", "t_env_seen"],
      hidden: ["delete_everything"],
      missing: [],
    });
    expect(probe.ms).toBeGreaterThanOrEqual(0);
    const docs = await ivoai(["mcp", "test", "docs"]);
    expect(docs.stdout).toMatch(/^docs: ok in \d+ ms, 1 tools: lookup/);
  });

  it("a launch gives the agent both (no secret in its argv), and session show names them", async () => {
    const bin = path.join(dir.dir, "agent-bin");
    mkdirSync(bin, { recursive: true });
    const FAKE = path.resolve("test/fixtures/fake-agent.mjs");
    writeFileSync(
      path.join(bin, "codex"),
      `#!/bin/sh\nFAKE_AGENT_NAME=codex exec "${process.execPath}" "${FAKE}" "$@"\n`,
      { mode: 0o755 },
    );
    const record = path.join(dir.dir, "agent-record.json");
    const launched = await runIvoai(["codex"], {
      env: { ...env, PATH: `${bin}:${process.env.PATH ?? ""}`, FAKE_AGENT_RECORD: record },
      timeoutMs: 60_000,
    });
    expect(launched.code, launched.stderr).toBe(0);
    const argv = (JSON.parse(readFileSync(record, "utf8")) as { argv: string[] }).argv;
    const urls = argv.filter((arg) => /^mcp_servers\.[a-z-]+\.url=/.test(arg));
    expect(urls.map((arg) => arg.split(".")[1])).toEqual(["docs", "tools"]);
    expect(argv.join(" ")).not.toContain("secret-");
    const sessions = JSON.parse((await ivoai(["session", "list", "--json"])).stdout).sessions as {
      id: string;
      mcp_servers: string[];
    }[];
    const session = sessions.at(-1);
    expect(session?.mcp_servers).toEqual(["docs", "tools"]);
    expect((await ivoai(["session", "show", session?.id ?? ""])).stdout).toContain(
      "  your MCP:    docs, tools\n",
    );
  });

  it("doctor probes each, and a stopped server is unhealthy with why (failing doctor when required)", async () => {
    const healthy = await ivoai(["doctor", "--json"]);
    const rows = rowsOf(healthy.stdout);
    expect(rows.find((row) => row.component === "user-mcp:tools")).toMatchObject({ healthy: "yes" });
    expect(rows.find((row) => row.component === "user-mcp:docs")).toMatchObject({ healthy: "yes" });

    await new Promise((resolve) => http.close(resolve));
    const stopped = await ivoai(["doctor", "--json", "--probe-timeout", "3"]);
    const row = rowsOf(stopped.stdout).find((entry) => entry.component === "user-mcp:docs");
    expect(row).toMatchObject({ healthy: "no", required: false });
    expect(row?.why).toMatch(/ECONNREFUSED|fetch failed|timed out/);
    const test = await ivoai(["mcp", "test", "docs", "--timeout", "3"]);
    expect(test.code).toBe(1);
    expect(test.stdout).toMatch(/^docs: failed after \d+ ms: /);

    // Marked required, its failure fails doctor.
    await ivoai(["mcp", "remove", "docs"]);
    await ivoai(
      ["mcp", "add", "docs", "--url", url, "--header-stdin", "Authorization", "--required"],
      HEADER_SECRET,
    );
    const required = await ivoai(["doctor", "--json", "--probe-timeout", "3"]);
    expect(required.code).toBe(1);
    expect(JSON.parse(required.stdout).status).toBe("fail");
  });

  it("disables, enables, removes (its secrets with it), and refuses bad input in one line", async () => {
    expect((await ivoai(["mcp", "disable", "tools"])).stdout).toBe("tools: disabled\n");
    const disabled = rowsOf((await ivoai(["doctor", "--json"])).stdout).find(
      (r) => r.component === "user-mcp:tools",
    );
    expect(disabled?.why).toBe("disabled");
    expect((await ivoai(["mcp", "enable", "tools"])).code).toBe(0);
    expect((await ivoai(["mcp", "remove", "tools"])).code).toBe(0);
    const secrets = readFileSync(path.join(env.XDG_CONFIG_HOME ?? "", "ivoai", "secrets.json"), "utf8");
    expect(secrets).not.toContain(ENV_SECRET);

    const missing = await ivoai(["mcp", "show", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no MCP server named nope/);
    const both = await ivoai(["mcp", "add", "x", "--url", url, "--", "node"]);
    expect(both.code).toBe(2);
    expect(both.stderr.trim().split("\n")).toHaveLength(1);
    const badName = await ivoai(["mcp", "add", "ivoai-x", "--url", url]);
    expect(badName.code).toBe(2);
    const badFlag = await ivoai(["mcp", "list", "--bogus"]);
    expect(badFlag.code).toBe(2);
  });
});
