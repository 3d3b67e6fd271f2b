// What a start of the built binary loads: `--version`, help and `hook` (run on every agent event) load the entry
// and the CLI's core only, never the server, the MCP SDK or zod; a command's own code is loaded when it runs.
// Every ES module the process loads is recorded by a module hook; each file's source map names what it holds.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, type RunResult, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-start-"));
  await writeFile(
    path.join(dir, "hooks.mjs"),
    [
      'import { appendFileSync } from "node:fs";',
      "export async function load(url, context, next) {",
      '  if (url.startsWith("file:")) appendFileSync(process.env.IVOAI_TEST_LOADS, url + "\\n");',
      "  return next(url, context);",
      "}",
    ].join("\n"),
  );
  await writeFile(
    path.join(dir, "register.mjs"),
    'import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n',
  );
});
afterAll(async () => cleanup());

/** Runs the binary with the module hook; returns its result and the source files of every module it loaded. */
async function traced(
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunResult & { files: string[]; sources: string[] }> {
  const loads = path.join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`);
  await writeFile(loads, "");
  const child = spawn(process.execPath, ["--import", path.join(dir, "register.mjs"), BIN, ...args], {
    env: { ...process.env, ...options.env, IVOAI_TEST_LOADS: loads },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdin.end(options.input ?? "");
  const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  const files = (await readFile(loads, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((url) => fileURLToPath(url))
    .filter((file) => file.startsWith(path.dirname(BIN)));
  const sources = new Set<string>();
  for (const file of files) {
    const map = JSON.parse(await readFile(`${file}.map`, "utf8")) as { sources: string[] };
    for (const source of map.sources) sources.add(path.resolve(path.dirname(file), source));
  }
  return { code, signal, stdout, stderr, files, sources: [...sources] };
}

const rel = (sources: readonly string[]) => sources.map((source) => path.relative(process.cwd(), source));
/** A command module, except the builtin completion command (part of the CLI's core: it completes from the manifest). */
const COMMAND_MODULE = /^src\/cli\/commands\/(?!completion\.ts$)/;
const HEAVY = /^(src\/server\/|node_modules\/(zod|hono|@hono|@modelcontextprotocol|smol-toml|yaml)\/)/;

describe("what a start of ivoai loads", () => {
  it("prints the version and help from the entry and the CLI's core, no command module or server code", async () => {
    const version = await traced(["--version"]);
    const pkg = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
    expect(version.files[0]).toBe(BIN);
    const loaded = rel(version.sources);
    expect(loaded).toContain("src/cli/run.ts");
    expect(loaded.filter((source) => HEAVY.test(source) || COMMAND_MODULE.test(source))).toEqual([]);

    const help = await traced(["help", "server", "start"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--listen");
    const typo = await traced(["sever", "status"]);
    expect(typo).toMatchObject({ code: 2 });
    expect(typo.stderr).toContain('did you mean "server"?');
    for (const run of [help, typo]) {
      expect(rel(run.sources).filter((source) => HEAVY.test(source) || COMMAND_MODULE.test(source))).toEqual(
        [],
      );
    }
  });

  it("delivers a hook event loading only the hook's code and the router's forwarder: no agent launcher, server, SDK or zod", async () => {
    const received: { authorization: string | undefined; body: unknown }[] = [];
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        received.push({ authorization: request.headers.authorization, body: JSON.parse(body) });
        response.writeHead(202).end();
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const { port } = server.address() as AddressInfo;
      const hook = await traced(["hook", "claude", "tool_used"], {
        input: JSON.stringify({
          hook_event_name: "PostToolUse",
          tool_name: "Bash",
          tool_input: { command: "ls" },
        }),
        env: {
          IVOAI_ROUTER_HOOKS_URL: `http://127.0.0.1:${port}/hooks/memory`,
          IVOAI_ROUTER_TOKEN: "router-token",
          IVOAI_SESSION_ID: "ses_start",
          IVOAI_PROJECT: "start-test",
        },
      });
      expect(hook.code).toBe(0);
      expect(received).toEqual([
        {
          authorization: "Bearer router-token",
          body: {
            session_id: "ses_start",
            project: "start-test",
            event: "tool_used",
            data: { tool: "Bash" },
          },
        },
      ]);
      const loaded = rel(hook.sources);
      expect(loaded).toContain("src/cli/commands/hook.ts");
      expect(loaded).toContain("src/client/agents/hook.ts");
      const commands = loaded.filter((source) => COMMAND_MODULE.test(source));
      expect(commands).toEqual(["src/cli/commands/hook.ts"]);
      // Of the router, only its dependency-free forwarder (node:http/https), which the hook posts through.
      expect(loaded.filter((source) => source.startsWith("src/client/router/"))).toEqual([
        "src/client/router/forward.ts",
      ]);
      expect(loaded.filter((source) => HEAVY.test(source))).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("exits 0 on hostile input: past the 256 KiB limit or not JSON, nothing is posted and the line is plain", async () => {
    const received: string[] = [];
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        received.push(request.url ?? "");
        response.writeHead(202).end();
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    /** The hook may stop reading (closing its end) past its limit: a write that then meets EPIPE is expected. */
    const fed = async (args: readonly string[], input: string, env: NodeJS.ProcessEnv) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stdin.on("error", (error: NodeJS.ErrnoException) => {
        if (error.code !== "EPIPE") throw error;
      });
      child.stdin.end(input);
      const [code] = (await once(child, "close")) as [number | null];
      return { code, stdout };
    };
    try {
      const { port } = server.address() as AddressInfo;
      const session = {
        IVOAI_ROUTER_HOOKS_URL: `http://127.0.0.1:${port}/hooks/memory`,
        IVOAI_ROUTER_TOKEN: "router-token",
        IVOAI_SESSION_ID: "ses_hostile",
        IVOAI_PROJECT: "start-test",
        XDG_STATE_HOME: path.join(dir, "hostile-state"),
      };
      // Valid JSON, but over the limit: only the limit keeps it from being read and posted.
      const oversized = JSON.stringify({
        tool_name: "Bash",
        tool_input: { command: "x".repeat(300 * 1024) },
        rate_limits: { five_hour: { used_percentage: 12, resets_at: 1_764_612_000 } },
      });
      for (const input of [oversized, "{not json"]) {
        expect(await fed(["hook", "claude", "tool_used"], input, session)).toEqual({ code: 0, stdout: "" });
        expect(await fed(["hook", "statusline"], input, session)).toEqual({ code: 0, stdout: "ivoai\n" });
      }
      expect(received).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("answers Claude's status line and records its quota without a schema library or the server", async () => {
    const home = path.join(dir, "statusline-state");
    const line = await traced(["hook", "statusline"], {
      input: JSON.stringify({
        rate_limits: { five_hour: { used_percentage: 12, resets_at: 1_764_612_000 } },
      }),
      env: { XDG_STATE_HOME: home },
    });
    expect(line).toMatchObject({ code: 0 });
    expect(line.stdout).toContain("5h 12%");
    const stored = JSON.parse(await readFile(path.join(home, "ivoai", "auto", "quota.json"), "utf8"));
    expect(stored.snapshots).toMatchObject([{ executor: "claude", window: "five_hour", used_percent: 12 }]);
    expect(rel(line.sources).filter((source) => HEAVY.test(source))).toEqual([]);
  });

  it("loads a command's own code when it runs: the server's for a server command", async () => {
    const status = await traced(["server", "status", "--root", path.join(dir, "no-server")]);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toContain("no server under");
    const loaded = rel(status.sources);
    expect(loaded).toContain("src/cli/commands/server-ops.ts");
    expect(loaded.some((source) => source.startsWith("src/server/"))).toBe(true);
  });
});
