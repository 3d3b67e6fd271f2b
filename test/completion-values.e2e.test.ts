// Completion of run-time values in real bash, zsh and fish, from the built binary on PATH: the client config's
// server aliases and knowledge sources, and the pending approval ids of a server tree (read-only, nothing else).
import { spawn } from "node:child_process";
import { chmod, mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import type { AuthenticatedClient } from "../src/server/enrollment/service.js";
import { initServer } from "../src/server/init.js";
import type { ToolSpec } from "../src/server/mcp/endpoint.js";
import { openMemoryService } from "../src/server/memory/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { BIN, runIvoai, tempDir } from "./helpers.js";

const BODY = "the body of a proposed page, never offered by completion";
const CREDENTIAL = "ivo_completion_never_prints_this_credential";

let dir: string;
let cleanup: () => Promise<void>;
let root: string;
let pending: string;
let applied: string;
let env: NodeJS.ProcessEnv;

/** Files one pending and one applied approval in a fresh server tree, through the real gate. */
async function approvals(): Promise<{ pending: string; applied: string }> {
  await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
  const memory = await openMemoryService({
    paths: serverPaths(root),
    config: serverConfigSchema.parse({ server: { public_url: "http://127.0.0.1:1" } }),
    logger: silentLogger,
  });
  try {
    const client: AuthenticatedClient = { id: "cli_agent", name: "agent", scopes: ["memory:write"] };
    const write = memory.tools.find((tool) => tool.name === "memory_write_page") as ToolSpec;
    if (write.tier === "read") throw new Error("memory_write_page is a read tool");
    const propose = async (page: string) =>
      memory.gate.propose(
        await write.propose({ path: page, body: BODY } as never, { client, sessionId: "s1", project: "p" }),
      );
    const done = await propose("notes/applied");
    expect((await memory.gate.decide(done.id, true, "alice")).outcome).toBe("applied");
    return { pending: (await propose("notes/pending")).id, applied: done.id };
  } finally {
    await memory.close();
  }
}

function run(program: string, args: readonly string[], input = "") {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ["pipe", "pipe", "pipe"], cwd: dir });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("ivoai-completion-values-"));
  root = path.join(dir, "srv");
  ({ pending, applied } = await approvals());
  const bin = path.join(dir, "bin");
  await mkdir(bin);
  // The scripts run the program being completed: the built binary, as a user's PATH has it.
  await writeFile(path.join(bin, "ivoai"), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(path.join(bin, "ivoai"), 0o755);
  const config = path.join(dir, "config", "ivoai");
  await mkdir(config, { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(config, "config.toml"),
    '[servers.srv_a]\nalias = "acme"\npurpose = "handbook"\nurl = "https://a.example"\n\n' +
      '[servers.srv_b]\nalias = "mind-1"\npurpose = "mind"\nredundancy_group = "mind-prod"\nurl = "https://b.example"\n\n' +
      '[mcp_servers.notes]\ntransport = "stdio"\ncommand = "node"\nargs = ["notes.js"]\n\n' +
      '[mcp_servers.docs]\ntransport = "http"\nurl = "https://mcp.example/mcp"\nenabled = false\n',
    { mode: 0o600 },
  );
  await writeFile(
    path.join(config, "secrets.json"),
    `${JSON.stringify({ schema: 2, servers: { srv_a: { credential: CREDENTIAL } } })}\n`,
    { mode: 0o600 },
  );
  env = {
    HOME: dir,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    XDG_CONFIG_HOME: path.join(dir, "config"),
    XDG_DATA_HOME: path.join(dir, "data"),
    XDG_STATE_HOME: path.join(dir, "state"),
  };
}, 60_000);
afterAll(() => cleanup());

describe("completion of run-time values", () => {
  it("bash offers server aliases, knowledge sources, pending approval ids and the user's MCP servers", async () => {
    const script = (await runIvoai(["completion", "bash"], { env })).stdout;
    const probe = `
source /dev/stdin <<'IVOAI_COMPLETION'
${script}
IVOAI_COMPLETION
show() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _ivoai; echo "$*|\${COMPREPLY[*]}"; }
show ivoai connect server show ""
show ivoai disconnect server m
show ivoai codex --knowledge-source ""
show ivoai server approvals approve --root ${root} ""
show ivoai server approvals show --root ${path.join(dir, "nothing")} ""
show ivoai mcp test ""
show ivoai mcp add ""
`;
    const result = await run("bash", ["--norc", "--noprofile", "-c", probe]);
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n")).toEqual([
      "ivoai connect server show |--help --debug --json acme mind-1",
      "ivoai disconnect server m|mind-1",
      "ivoai codex --knowledge-source |acme mind-1 handbook mind mind-prod",
      `ivoai server approvals approve --root ${root} |--help --debug --json --root --reason ${pending}`,
      `ivoai server approvals show --root ${path.join(dir, "nothing")} |--help --debug --json --root`,
      "ivoai mcp test |--help --debug --json --timeout docs notes",
      "ivoai mcp add |--help --debug --json --url --header-stdin --env-stdin --read-only --allow --prefix --disabled --required",
      "",
    ]);
  });

  it("zsh offers them with descriptions", async () => {
    const script = (await runIvoai(["completion", "zsh"], { env })).stdout;
    const probe = `
compdef() { :; }
_describe() { print -rl -- "\${(@P)4}"; }
_files() { print -r -- "<files>"; }
eval "$(cat)"
words=(ivoai connect server test ""); CURRENT=5; _ivoai; print -- ---
words=(ivoai server approvals reject ""); CURRENT=5; _ivoai; print -- ---
words=(ivoai auto --knowledge-source ""); CURRENT=4; _ivoai
`;
    const result = await run("zsh", ["-f", "-c", probe], script);
    expect(result.stderr).toBe("");
    const [aliases = "", ids = "", sources = ""] = result.stdout.split("---\n");
    expect(aliases.split("\n")).toContain("acme:server (purpose handbook)");
    expect(aliases.split("\n")).toContain("mind-1:server (purpose mind)");
    // No --root typed: IVOAI_SERVER_ROOT names the tree.
    expect(ids).not.toContain(pending);
    expect(sources.split("\n")).toEqual([
      "acme:server (purpose handbook)",
      "mind-1:server (purpose mind)",
      "handbook:purpose",
      "mind:purpose",
      "mind-prod:redundancy group",
      "",
    ]);
    env.IVOAI_SERVER_ROOT = root;
    try {
      const withRoot = await run("zsh", ["-f", "-c", probe], script);
      const offered = (withRoot.stdout.split("---\n")[1] ?? "").split("\n");
      expect(offered.filter((line) => !line.startsWith("-"))).toEqual([
        expect.stringMatching(new RegExp(`^${pending}:pending memory_write_page since \\d{4}-`)),
        "",
      ]);
    } finally {
      delete env.IVOAI_SERVER_ROOT;
    }
  });

  it("fish's own completer offers them", async () => {
    const file = path.join(dir, "ivoai.fish");
    await writeFile(file, (await runIvoai(["completion", "fish"], { env })).stdout);
    const probe =
      `source ${file}; complete -C "ivoai connect server enable "; echo ---; ` +
      `complete -C "ivoai server approvals show --root ${root} "`;
    const result = await run("fish", ["--no-config", "-c", probe]);
    expect(result.stderr).toBe("");
    const [aliases = "", ids = ""] = result.stdout.split("---\n");
    expect(aliases).toBe("acme\tserver (purpose handbook)\nmind-1\tserver (purpose mind)\n");
    expect(ids.split("\n").filter((line) => !line.startsWith("-"))).toEqual([
      expect.stringMatching(new RegExp(`^${pending}\tpending memory_write_page since `)),
      "",
    ]);
  });

  it("lists only pending ids, prints nothing secret and changes nothing", async () => {
    const before = (await readdir(serverPaths(root).memoryDir)).sort();
    const shown = await runIvoai(["completion", "bash", "--values", "approval-id", "--root", root], { env });
    expect(shown).toMatchObject({ code: 0, stderr: "", stdout: `${pending}\n` });
    expect(shown.stdout).not.toContain(applied);
    for (const kind of ["server-alias", "knowledge-source", "approval-id"]) {
      const result = await runIvoai(["completion", "fish", "--values", kind, "--root", root], { env });
      expect(result.stdout + result.stderr).not.toContain(CREDENTIAL);
      expect(result.stdout + result.stderr).not.toContain(BODY);
      expect(result.stdout + result.stderr).not.toContain("https://");
    }
    expect((await readdir(serverPaths(root).memoryDir)).sort()).toEqual(before);
  });

  it("is silent when there is nothing to read, and creates nothing", async () => {
    const nowhere = path.join(dir, "no-such-root");
    const result = await runIvoai(["completion", "zsh", "--values", "approval-id", "--root", nowhere], {
      env: { ...env, XDG_CONFIG_HOME: path.join(dir, "no-config") },
    });
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const aliases = await runIvoai(["completion", "bash", "--values", "server-alias"], {
      env: { ...env, XDG_CONFIG_HOME: path.join(dir, "no-config") },
    });
    expect(aliases).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const left = await readdir(dir);
    expect(left).not.toContain("no-such-root");
    expect(left).not.toContain("no-config");
  });
});
