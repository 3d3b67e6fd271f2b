// Runs the real pinned OpenCode in tests: an isolated home (its own XDG folders, no project config) and a
// non-interactive child whose output is collected.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";

/** OpenCode's environment for a test: only PATH from outside, everything it writes under `home`. */
export function opencodeEnv(
  home: string,
  config: object,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local/state"),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    ...extra,
  };
}

export interface OpencodeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `opencode ARGS` with stdin closed (`opencode run` waits for piped input otherwise), killed after 2 minutes. */
export function runOpencode(
  program: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; onSpawn?: (child: ChildProcess) => void },
): Promise<OpencodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
    });
    child.stderr.on("data", (data: Buffer) => {
      stderr += data.toString();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    options.onSpawn?.(child);
  });
}
