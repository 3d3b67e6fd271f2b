// The injection contract against the real official CLIs from npm (pinned in TESTED_VERSIONS), offline and
// without a login: every flag ivoai passes is in their --help, and their own config readers show ivoai's servers.
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { TESTED_VERSIONS } from "../src/client/agents/catalog.js";
import { buildInjection, TOKEN_ENV } from "../src/client/agents/inject.js";
import { KNOWLEDGE_POLICY } from "../src/client/agents/policy.js";
import { runIvoai } from "./helpers.js";
import { ensureAgentClis } from "./npm-tools.js";

const run = promisify(execFile);
const DIR = path.resolve(".tmp/agent-clis");
const BIN = path.join(DIR, "node_modules/.bin");
const router = {
  endpoints: {
    context: "http://127.0.0.1:5555/mcp/context",
    memory: "http://127.0.0.1:5555/mcp/memory",
    hooks: "http://127.0.0.1:5555/hooks/memory",
  },
};
const home = path.join(DIR, "home");
const env = { PATH: process.env.PATH ?? "", HOME: home, [TOKEN_ENV]: "not-a-real-capability" };
const cli = async (name: string, args: string[], extraEnv: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await run(path.join(BIN, name), args, {
      env: { ...env, ...extraEnv },
      timeout: 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, out: failure.stdout ?? "", err: failure.stderr ?? "" };
  }
};

/** The first stdout line of `file` that `wanted` accepts (then it is killed), or an error with what it printed. */
function lineWhere(
  file: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string },
  wanted: (line: string) => boolean,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let found: string | undefined;
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stderr.on("data", (chunk) => (err += chunk));
    createInterface({ input: child.stdout }).on("line", (line) => {
      out += `${line}\n`;
      if (found === undefined && wanted(line)) {
        found = line;
        child.kill("SIGKILL");
      }
    });
    child.on("close", () => {
      clearTimeout(timer);
      if (found !== undefined) resolve(found);
      else reject(new Error(`no such line from ${path.basename(file)}; stdout: ${out}; stderr: ${err}`));
    });
  });
}

/** The pinned CLIs, installed once into .tmp (their install scripts explicitly allowed, as npm 11 requires). */
async function install(): Promise<void> {
  await mkdir(home, { recursive: true });
  await ensureAgentClis(TESTED_VERSIONS);
}

describe("contracts with the official agent CLIs", () => {
  beforeAll(install, 900_000);

  it("runs the pinned versions", async () => {
    expect((await cli("codex", ["--version"])).out).toContain(TESTED_VERSIONS.codex);
    expect((await cli("claude", ["--version"])).out).toContain(TESTED_VERSIONS.claude);
    expect((await cli("opencode", ["--version"])).out).toContain(TESTED_VERSIONS.opencode);
  });

  it("codex: its flags exist and `mcp list` shows ivoai's servers with the bearer passed by variable name", async () => {
    const injection = buildInjection("codex", {
      router,
      runtimeDir: "/nonexistent",
      hookCommand: ["node", "ivoai.mjs"],
    });
    const help = (await cli("codex", ["--help"])).out;
    for (const flag of new Set(injection.args.filter((arg) => arg.startsWith("-"))))
      expect(help).toContain(flag);
    const listed = await cli("codex", [...injection.args, "mcp", "list", "--json"]);
    expect(listed.code).toBe(0);
    const servers = JSON.parse(listed.out) as {
      name: string;
      enabled: boolean;
      transport: { type: string; url: string; bearer_token_env_var: string };
    }[];
    expect(
      servers
        .map((server) => [
          server.name,
          server.transport.type,
          server.transport.url,
          server.transport.bearer_token_env_var,
        ])
        .sort(),
    ).toEqual([
      ["ivoai-context", "streamable_http", router.endpoints.context, TOKEN_ENV],
      ["ivoai-memory", "streamable_http", router.endpoints.memory, TOKEN_ENV],
    ]);
    expect(listed.out).not.toContain("not-a-real-capability");
    // The knowledge policy reaches the model input as developer instructions.
    const prompt = await cli("codex", [...injection.args, "debug", "prompt-input", "hello"]);
    expect(prompt.out).toContain(KNOWLEDGE_POLICY.split("\n")[1]?.trim().slice(0, 40));
  });

  it("claude: every flag ivoai passes is in its --help", async () => {
    const injection = buildInjection("claude", {
      router,
      runtimeDir: "/run/ivoai",
      hookCommand: ["node", "ivoai.mjs"],
    });
    const help = (await cli("claude", ["--help"])).out;
    for (const flag of injection.args.filter((arg) => arg.startsWith("--"))) expect(help).toContain(flag);
    const settings = JSON.parse(
      injection.files.find((file) => file.name === "settings.json")?.content ?? "{}",
    ) as {
      hooks: Record<string, unknown>;
    };
    expect(Object.keys(settings.hooks).sort()).toEqual([
      "PostToolUse",
      "SessionStart",
      "Stop",
      "UserPromptSubmit",
    ]);
  });

  it("claude: a session loads ivoai's servers from --mcp-config, which `mcp list` never reads (as ivoai's help says)", async () => {
    const runtimeDir = await mkdtemp(path.join(home, "run-"));
    const injection = buildInjection("claude", { router, runtimeDir, hookCommand: ["node", "ivoai.mjs"] });
    for (const file of injection.files) await writeFile(path.join(runtimeDir, file.name), file.content);
    // Claude's listing reads only its configured scopes: `ivoai claude -- mcp list` finds nothing.
    const listed = await cli("claude", [...injection.args, "mcp", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("No MCP servers configured");
    // A session does load them (its first stream-json event, before any model call; the API points nowhere).
    const init = await lineWhere(
      path.join(BIN, "claude"),
      [...injection.args, "-p", "hi", "--output-format", "stream-json", "--verbose"],
      {
        env: {
          ...env,
          ANTHROPIC_API_KEY: "sk-ant-not-a-real-key",
          ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
        cwd: runtimeDir,
      },
      (line) => line.includes('"subtype":"init"'),
    );
    const event = JSON.parse(init) as { subtype?: string; mcp_servers?: { name: string; source?: string }[] };
    expect(event.subtype).toBe("init");
    expect(event.mcp_servers?.map((server) => server.name).sort()).toEqual(["ivoai-context", "ivoai-memory"]);
    // And ivoai's help says why the listing is empty and where to look instead.
    const help = await runIvoai(["claude", "--help"]);
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "'claude mcp list' reads only Claude's configured scopes (user, project, local), never --mcp-config",
    );
    expect(help.stdout).toContain("type /mcp in the session");
  });

  it("opencode: its resolved config shows ivoai's servers and instructions, with the header masked", async () => {
    const injection = buildInjection("opencode", {
      router,
      runtimeDir: "/run/ivoai-session",
      hookCommand: [],
    });
    const shown = await cli("opencode", ["debug", "config"], injection.env);
    expect(shown.code).toBe(0);
    const config = JSON.parse(shown.out) as {
      mcp: Record<string, { type: string; url: string }>;
      instructions?: string[];
    };
    expect(config.mcp["ivoai-context"]).toMatchObject({ type: "remote", url: router.endpoints.context });
    expect(config.mcp["ivoai-memory"]).toMatchObject({ type: "remote", url: router.endpoints.memory });
    expect(config.instructions).toEqual(["/run/ivoai-session/ivoai-policy.md"]);
    expect(shown.out).not.toContain("not-a-real-capability");
  });
});
