// Running one Ruflo CLI command safely: a clean environment without credentials, the session's runtime
// subtree as cwd and HOME, its own process group, bounded time and output, and the trailing JSON it prints.
import { type ChildProcess, spawn as nodeSpawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import path from "node:path";

/** Forced into every Ruflo process (seed: provider-less, process-local memory; no daemon, no self-update). */
export const RUFLO_FORCED_ENV: Readonly<Record<string, string>> = Object.freeze({
  RUFLO_PROVIDER: "ivoai-disabled",
  CLAUDE_FLOW_MEMORY_BACKEND: "memory",
  RUFLO_DAEMON_AUTOSTART: "0",
  CLAUDE_FLOW_AUTO_UPDATE: "false",
  RUFLO_NO_SKILLS_SH: "1",
  NO_COLOR: "1",
});

/** The only variables taken from the parent; everything else (credentials included) is dropped. */
const INHERITED_ENV = ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"] as const;

/** Names that must never reach Ruflo, even if a future edit widened the inherited list. */
const CREDENTIAL_NAME = /(API_KEY|_TOKEN|SECRET|PASSWORD|CREDENTIAL|OAUTH|^AWS_|^AZURE_|^GOOGLE_|^IVOAI_)/i;

/**
 * The environment of a Ruflo process: PATH and locale from `parent`, HOME and TMPDIR inside `home`, the
 * forced provider/memory switches and the MCP tool profile. No credential of any provider survives.
 */
export function rufloEnv(
  parent: NodeJS.ProcessEnv,
  home: string,
  tools: readonly string[],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = parent[name];
    if (value !== undefined && !CREDENTIAL_NAME.test(name)) env[name] = value;
  }
  env.PATH ??= "/usr/local/bin:/usr/bin:/bin";
  env.HOME = home;
  env.TMPDIR = path.join(home, "tmp");
  env.CLAUDE_FLOW_MCP_TOOLS = tools.join(",");
  Object.assign(env, RUFLO_FORCED_ENV);
  return env;
}

export type Spawn = typeof nodeSpawn;

export interface RufloRunOptions {
  /** Real path of the Ruflo entry script (run with this Node) or executable. */
  entry: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Private directory for the captured output. */
  ioDir: string;
  timeoutMs: number;
  killAfterMs: number;
  spawn?: Spawn;
}

export interface RufloRunResult {
  stdout: string;
  stderr: string;
}

const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_CHARS = 4_000;

/** Raised for every failed command; its message is one bounded line. */
export class RufloCommandError extends Error {
  override readonly name = "RufloCommandError";
}

/**
 * Runs `ruflo ARGS` to completion. Stdout goes to a private file, not a pipe: Ruflo calls process.exit
 * right after printing, which truncates anything beyond the pipe buffer (seen at 64 KiB for `mcp tools`).
 */
export async function runRuflo(options: RufloRunOptions): Promise<RufloRunResult> {
  const label = commandLabel(options.args);
  const outFile = path.join(options.ioDir, `out-${randomBytes(6).toString("hex")}`);
  const out = await fs.open(outFile, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  let stderr = "";
  let exit: { code: number | null; signal: NodeJS.Signals | null; timedOut: boolean };
  try {
    const isScript = /\.(c|m)?js$/.test(options.entry);
    const child = (options.spawn ?? nodeSpawn)(
      isScript ? process.execPath : options.entry,
      isScript ? [options.entry, ...options.args] : [...options.args],
      { cwd: options.cwd, env: options.env, stdio: ["ignore", out.fd, "pipe"], detached: true },
    );
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-MAX_STDERR_CHARS);
    });
    exit = await waitBounded(child, options.timeoutMs, options.killAfterMs);
    const size = (await out.stat()).size;
    if (size > MAX_STDOUT_BYTES)
      throw new RufloCommandError(`ruflo ${label}: printed ${size} bytes, more than ${MAX_STDOUT_BYTES}`);
  } finally {
    await out.close();
  }
  const stdout = await fs.readFile(outFile, "utf8").finally(() => fs.rm(outFile, { force: true }));
  if (exit.timedOut) throw new RufloCommandError(`ruflo ${label}: no answer within ${options.timeoutMs} ms`);
  if (exit.code !== 0) {
    const how = exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`;
    throw new RufloCommandError(`ruflo ${label}: ${how}: ${oneLine(stderr || stdout) || "no output"}`);
  }
  return { stdout, stderr };
}

function waitBounded(
  child: ChildProcess,
  timeoutMs: number,
  killAfterMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; timedOut: boolean }> {
  return new Promise((resolve, reject) => {
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // the group is already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => signalGroup("SIGKILL"), killAfterMs);
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      reject(new RufloCommandError(`ruflo could not start: ${oneLine(error.message)}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      resolve({ code, signal, timedOut });
    });
  });
}

/**
 * The JSON value Ruflo prints last. With `--format json` it still prints progress lines and tables
 * first, then the value pretty-printed from column 0; a missing or unparsable value is an error.
 */
export function trailingJson(stdout: string, label: string): unknown {
  const lines = stdout.split("\n");
  for (let start = lines.length - 1; start >= 0; start--) {
    const first = lines[start] ?? "";
    if (!first.startsWith("{") && !first.startsWith("[")) continue;
    try {
      return JSON.parse(lines.slice(start).join("\n"));
    } catch {
      // an inner line that happens to start at column 0; keep looking further up
    }
  }
  throw new RufloCommandError(`ruflo ${label}: no JSON result in its output`);
}

export function commandLabel(args: readonly string[]): string {
  const words = args.filter((arg) => !arg.startsWith("-") && /^[a-z_-]{1,40}$/.test(arg));
  return words.slice(0, 4).join(" ") || "command";
}

export function oneLine(text: string, max = 240): string {
  const line = text
    .replace(/\s+/g, " ")
    .replace(/[^\x20-\x7e]/g, "")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
