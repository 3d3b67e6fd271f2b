// What a user expects of any CLI, checked on the built binary: help, version, did-you-mean, completion that a
// real shell loads, JSON errors, sentences instead of errno codes, and saying so when there is nothing to find.
import { execFileSync, spawn } from "node:child_process";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDocsConnector, BIN, initRoot, type RunResult, runIvoai, tempDir } from "./helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function fresh(): Promise<string> {
  const { dir, cleanup } = await tempDir("ivoai-conv-");
  cleanups.push(cleanup);
  return dir;
}

/** Whether a shell is here to test against; under CI (.ci/run installs zsh and fish) a missing one fails. */
function installed(program: string): boolean {
  if (process.env.CI === "true") return true;
  try {
    execFileSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Runs `program` with `args`, `script` on stdin, and collects its output. */
function run(program: string, args: readonly string[], input = ""): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(input);
  });
}

function listening(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

describe("help and version", () => {
  it("shows a command's help through 'help COMMAND…', the same as its --help", async () => {
    const viaHelp = await runIvoai(["help", "server", "approvals", "list"]);
    const direct = await runIvoai(["server", "approvals", "list", "--help"]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(direct.stdout);
    expect(viaHelp.stdout).toContain("Usage: ivoai server approvals list [options]");
    expect(viaHelp.stdout).toContain("one of: pending, applied, rejected, expired, conflict, all");
    expect((await runIvoai(["server", "help", "approvals"])).stdout).toContain(
      "Usage: ivoai server approvals",
    );
  });

  it("prints the version alone for -v, -V and --version, and the runtime for 'version'", async () => {
    for (const flag of ["-v", "-V", "--version"]) {
      const result = await runIvoai([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
    }
    const version = (await runIvoai(["--version"])).stdout.trim();
    const json = await runIvoai(["version", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      version,
      node: process.versions.node,
      node_abi: process.versions.modules,
      platform: process.platform,
      arch: process.arch,
    });
    // A version flag with --json is the version command with --json.
    for (const argv of [
      ["--version", "--json"],
      ["-v", "--json"],
      ["--json", "-V"],
    ]) {
      const flagged = await runIvoai(argv);
      expect(flagged.code, argv.join(" ")).toBe(0);
      expect(JSON.parse(flagged.stdout)).toEqual(JSON.parse(json.stdout));
    }
    const text = await runIvoai(["version"]);
    expect(text.stdout).toContain(`ivoai ${version}`);
    expect(text.stdout).toContain(`native module ABI ${process.versions.modules}`);
  });
});

describe("mistakes", () => {
  it("names the command, subcommand or flag a typo meant, in one line with exit 2", async () => {
    const cases: [string[], string][] = [
      [["sever"], 'ivoai: unknown command "sever"; did you mean "server"?'],
      [
        ["server", "aprovals", "list"],
        'ivoai: unknown command "aprovals" for "ivoai server"; did you mean "approvals"?',
      ],
      [
        ["help", "server", "serch"],
        'ivoai: unknown command "serch" for "ivoai server"; did you mean "search"?',
      ],
      [
        ["server", "approvals", "list", "--lmit", "3"],
        'ivoai: unknown option "--lmit"; did you mean "--limit"?',
      ],
    ];
    for (const [argv, line] of cases) {
      const result = await runIvoai(argv);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`${line}\n`);
      expect(result.stdout).toBe("");
    }
  });

  it("lists the valid values of an enum-like flag", async () => {
    const status = await runIvoai(["server", "approvals", "list", "--status", "foo"]);
    expect(status.code).toBe(2);
    expect(status.stderr).toBe(
      'ivoai: invalid --status "foo": expected one of pending, applied, rejected, expired, conflict, all\n',
    );
    const kind = await runIvoai(["server", "audit", "--kind", "tool"]);
    expect(kind.stderr).toContain(
      'invalid --kind "tool": expected one of tool_call, approval_decision, approval_expired, page_expired, client_revoked',
    );
    const level = await runIvoai(["server", "start", "--log-level", "loud"]);
    expect(level.code).toBe(2);
    expect(level.stderr).toContain('invalid --log-level "loud": expected one of debug, info, warn, error');
  });

  it("prints errors as JSON on stderr with --json, keeping the exit status", async () => {
    const usage = await runIvoai(["server", "approvals", "list", "--status", "foo", "--json"]);
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe("");
    expect(JSON.parse(usage.stderr)).toEqual({
      error: {
        code: "USAGE",
        message: 'invalid --status "foo": expected one of pending, applied, rejected, expired, conflict, all',
      },
    });
    const typo = await runIvoai(["sever", "--json"]);
    expect(typo.code).toBe(2);
    expect(JSON.parse(typo.stderr).error).toMatchObject({
      code: "USAGE",
      message: expect.stringContaining("did you mean"),
    });
    const missing = await runIvoai([
      "server",
      "enrollment",
      "list",
      "--root",
      "/nonexistent/ivoai",
      "--json",
    ]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).error.code).toBe("CONFIG_MISSING");
  });
});

describe("completion", () => {
  it("loads in a real bash and completes commands, subcommands, flags and flag values", async () => {
    const script = (await runIvoai(["completion", "bash"])).stdout;
    const probe = `
source /dev/stdin <<'IVOAI_COMPLETION'
${script}
IVOAI_COMPLETION
complete -p ivoai
show() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _ivoai; echo "$*|\${COMPREPLY[*]}"; }
show ivoai ser
show ivoai server appr
show ivoai server approvals ""
show ivoai server approvals list --st
show ivoai server approvals list --status ""
show ivoai completion ""
show ivoai codex -- ""
`;
    const result = await run("bash", ["--norc", "--noprofile", "-c", probe]);
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n")).toEqual([
      "complete -o default -F _ivoai ivoai",
      "ivoai ser|server",
      "ivoai server appr|approvals",
      "ivoai server approvals |list show approve reject help --help",
      "ivoai server approvals list --st|--status",
      "ivoai server approvals list --status |pending applied rejected expired conflict all",
      "ivoai completion |bash zsh fish --help --debug --values --root",
      "ivoai codex -- |",
      "",
    ]);
  });

  it.skipIf(!installed("zsh"))("parses in zsh and offers the same words with descriptions", async () => {
    const script = (await runIvoai(["completion", "zsh"])).stdout;
    expect((await run("zsh", ["-n"], script)).code).toBe(0);
    // The completion system's builtins, replaced by printers: the script's own logic runs in a real zsh.
    const probe = `
compdef() { print -r -- "compdef $*"; }
_describe() { print -rl -- "\${(@P)4}"; }
compadd() { shift; print -rl -- "$@"; }
_files() { print -r -- "<files>"; }
eval "$(cat)"
words=(ivoai server approvals ""); CURRENT=4; _ivoai
words=(ivoai server approvals list --status ""); CURRENT=6; _ivoai
words=(ivoai server init --root ""); CURRENT=5; _ivoai
`;
    const result = await run("zsh", ["-f", "-c", probe], script);
    expect(result.stderr).toBe("");
    const lines = result.stdout.split("\n");
    expect(lines[0]).toBe("compdef _ivoai ivoai");
    expect(lines).toContain(
      "list:List approval requests (pending by default), newest first, one page at a time",
    );
    expect(lines).toContain("--help:show this help");
    expect(lines.join(" ")).toContain("pending applied rejected expired conflict all");
    expect(lines).toContain("<files>");
  });

  it.skipIf(!installed("fish"))("loads in fish, whose own completer answers from it", async () => {
    // From a file: fish does not read a script from a socket on stdin (what spawn gives it).
    const file = path.join(await fresh(), "ivoai.fish");
    await writeFile(file, (await runIvoai(["completion", "fish"])).stdout);
    expect((await run("fish", ["--no-config", "-n", file])).code).toBe(0);
    const probe = `source ${file}; complete -C "ivoai sev"; echo ---; complete -C "ivoai server approvals list --status "`;
    const result = await run("fish", ["--no-config", "-c", probe]);
    expect(result.stderr).toBe("");
    const [commands, statuses] = result.stdout.split("---\n");
    expect(commands).toBe("server\tRun and administer an ivoai knowledge server\n");
    expect((statuses ?? "").split("\n").map((line) => line.split("\t")[0])).toEqual([
      "all",
      "applied",
      "conflict",
      "expired",
      "pending",
      "rejected",
      "",
    ]);
  });
});

describe("the server tree", () => {
  it("names --root and IVOAI_SERVER_ROOT when there is no server tree", async () => {
    const root = path.join(await fresh(), "nothing-here");
    const expected =
      `ivoai: no ivoai server at ${root} (etc/ivoai/server.toml missing): ` +
      `run "ivoai server init --root ${root}" or pass --root/IVOAI_SERVER_ROOT\n`;
    for (const argv of [
      ["server", "search", "x", "--root", root],
      ["server", "audit", "--root", root],
      ["server", "approvals", "list", "--root", root],
      ["server", "start", "--root", root],
    ]) {
      const result = await runIvoai(argv);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(expected);
    }
    const viaEnv = await runIvoai(["server", "enrollment", "list"], { env: { IVOAI_SERVER_ROOT: root } });
    expect(viaEnv.stderr).toBe(expected);
  });

  it("says a permission problem is one, not that the server needs an init", async () => {
    const base = await fresh();
    await chmod(base, 0o755);
    const root = path.join(base, "srv");
    await initRoot(root);
    const config = path.join(root, "etc/ivoai/server.toml");
    let runAsOther: (argv: string[]) => Promise<RunResult>;
    if (process.getuid?.() === 0) {
      // Root reads everything: run as nobody when nobody can run this checkout's binary, else as root
      // without the capabilities that bypass file permissions, on a tree that belongs to nobody.
      const nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
      const canRun = (await run("setpriv", [...nobody, process.execPath, BIN, "--version"])).code === 0;
      if (!canRun) await chownTree(root, 65534);
      const drop = canRun ? nobody : ["--bounding-set=-dac_override,-dac_read_search"];
      runAsOther = (argv) => run("setpriv", [...drop, process.execPath, BIN, ...argv]);
    } else {
      // Anyone else is refused by the mode itself.
      await chmod(config, 0o000);
      runAsOther = (argv) => runIvoai(argv);
    }
    for (const argv of [
      ["server", "enrollment", "list", "--root", root],
      ["server", "search", "x", "--root", root],
      ["server", "audit", "--root", root],
    ]) {
      const result = await runAsOther(argv);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `ivoai: permission denied reading ${config}: run as the server's user or fix the permissions\n`,
      );
    }
    const json = await runAsOther(["server", "audit", "--root", root, "--json"]);
    expect(JSON.parse(json.stderr).error.code).toBe("PERMISSION_DENIED");
  });

  it("names the port in use and what to change instead of EADDRINUSE", async () => {
    const root = await fresh();
    await initRoot(root);
    const holder = await listening();
    try {
      const port = portOf(holder);
      const result = await runIvoai(["server", "start", "--root", root, "--listen", `127.0.0.1:${port}`], {
        timeoutMs: 30_000,
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `ivoai: port ${port} on 127.0.0.1 is in use: stop the other process or change --listen\n`,
      );
      expect(result.stderr).not.toContain("EADDRINUSE");
    } finally {
      holder.close();
    }
  });
});

describe("client errors", () => {
  it("says a server could not be reached and what to check instead of 'fetch failed'", async () => {
    const xdg = await fresh();
    const env = {
      XDG_CONFIG_HOME: path.join(xdg, "config"),
      XDG_STATE_HOME: path.join(xdg, "state"),
      XDG_DATA_HOME: path.join(xdg, "data"),
    };
    const closed = await listening();
    const port = portOf(closed);
    await new Promise((resolve) => closed.close(resolve));
    const url = `http://127.0.0.1:${port}`;
    const args = ["connect", "server", "add", "acme", "--url", url, "--purpose", "acme", "--code-stdin"];
    const result = await runIvoai(args, { env, input: "ivoai_enr_x\n" });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `ivoai: could not reach ${url} (connection refused: nothing is listening there): check the URL and network\n`,
    );
    const json = await runIvoai([...args, "--json"], { env, input: "ivoai_enr_x\n" });
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: "NETWORK" });
    // With no server connected, the lists are empty objects with their named arrays.
    expect(JSON.parse((await runIvoai(["connect", "server", "list", "--json"], { env })).stdout)).toEqual({
      servers: [],
    });
    expect(JSON.parse((await runIvoai(["session", "list", "--json"], { env })).stdout)).toEqual({
      sessions: [],
    });
  });
});

describe("an empty server", () => {
  let root: string;
  beforeAll(async () => {
    root = await fresh();
    await initRoot(root);
  });

  it("prints every list as an object with a named array", async () => {
    const lists: [string[], string][] = [
      [["server", "enrollment", "list"], "enrollments"],
      [["server", "clients", "list"], "clients"],
      [["server", "connector", "list"], "connectors"],
      [["server", "audit"], "events"],
    ];
    for (const [argv, key] of lists) {
      const result = await runIvoai([...argv, "--root", root, "--json"]);
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual({ [key]: [] });
    }
    const approvals = await runIvoai(["server", "approvals", "list", "--root", root, "--json"]);
    expect(JSON.parse(approvals.stdout)).toEqual({ approvals: [], next_cursor: null });
  });

  it("says the index is empty and what to do, in text and in --json", async () => {
    const hint =
      'the index is empty: add a connector ("ivoai server connector add NAME --type filesystem --path DIR") ' +
      'and run "ivoai server ingest"';
    const text = await runIvoai(["server", "search", "deploy", "--root", root]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`${hint}\n`);
    const json = await runIvoai(["server", "search", "deploy", "--root", root, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({
      query: "deploy",
      count: 0,
      results: [],
      untrusted: true,
      hint,
    });
  });

  it("says a connector's folder does not exist instead of ENOENT", async () => {
    const missing = path.join(root, "no-such-docs");
    const args = ["server", "connector", "add", "gone", "--type", "filesystem", "--path", missing];
    const result = await runIvoai([...args, "--root", root]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`ivoai: connector root ${missing} does not exist: check --path\n`);
    const type = await runIvoai(["server", "connector", "add", "gone", "--type", "svn", "--root", root]);
    expect(type.code).toBe(2);
    expect(type.stderr).toBe('ivoai: invalid --type "svn": expected one of filesystem, git\n');
  });

  it("says an ingested source produced no documents, with what was skipped and why", async () => {
    const docs = path.join(root, "docs");
    await mkdir(docs);
    await writeFile(path.join(docs, ".env"), "TOKEN=x\n");
    await writeFile(path.join(docs, "logo.md"), Buffer.from([0, 1, 2, 3]));
    await addDocsConnector(root, docs);
    const hint = `connector docs produced no documents: is ${docs} empty or filtered? (2 skipped: `;
    const text = await runIvoai(["server", "ingest", "--root", root]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(hint);
    const json = await runIvoai(["server", "ingest", "--root", root, "--json"]);
    const { summaries } = JSON.parse(json.stdout) as { summaries: { connector: string; hint?: string }[] };
    expect(summaries).toHaveLength(1);
    expect(summaries[0]?.hint).toMatch(
      /^connector docs produced no documents: .*\(2 skipped: .*sensitive file 1/,
    );
    expect(summaries[0]?.hint).toContain("binary content 1");
  });
});

async function chownTree(dir: string, uid: number): Promise<void> {
  execFileSync("chown", ["-R", `${uid}:${uid}`, dir]);
}
