// The main Git repository a folder belongs to, for the repo-root project rule (seed 000): every linked worktree and
// subfolder of one repository answers the same root. One bounded `git rev-parse` with a minimal environment.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";

/** Where `cwd` sits in Git, or why it does not (the reason `ivoai project show` prints). */
export type GitLookup =
  | { found: true; mainRoot: string; worktree: string; name: string }
  | { found: false; reason: string };

/** How long the one git call may take before the identity falls back to the host. */
export const GIT_TIMEOUT_MS = 3_000;

export interface GitLookupOptions {
  /** Where `git` is looked for (PATH); nothing else of it reaches git. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

interface GitOutput {
  stdout: string;
  stderr: string;
  error: (Error & { code?: unknown; killed?: boolean }) | null;
}

function runGit(cwd: string, options: GitLookupOptions): Promise<GitOutput> {
  const env = {
    PATH: (options.env ?? process.env).PATH ?? "/usr/bin:/bin",
    // No system or user configuration (hooks' GIT_DIR and the like never reach it either), messages in English.
    GIT_CONFIG_NOSYSTEM: "1",
    HOME: "/nonexistent",
    LC_ALL: "C",
  };
  const args = ["-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"];
  return new Promise((resolve) => {
    execFile(
      "git",
      args,
      { env, timeout: options.timeoutMs ?? GIT_TIMEOUT_MS, killSignal: "SIGKILL", windowsHide: true },
      (error, stdout, stderr) => resolve({ stdout: String(stdout), stderr: String(stderr), error }),
    );
  });
}

function failure({ stderr, error }: GitOutput, timeoutMs: number): string {
  if (error?.code === "ENOENT") return "git is not installed (not found on PATH)";
  if (error?.killed) return `git did not answer within ${timeoutMs} ms`;
  const said =
    stderr
      .trim()
      .split("\n")[0]
      ?.replace(/^fatal: /, "") ?? "";
  if (/not a git repository/i.test(said)) return "not inside a Git repository";
  return `git failed: ${said || error?.message || "no output"}`.slice(0, 300);
}

async function real(dir: string): Promise<string> {
  return fs.realpath(dir).catch(() => path.resolve(dir));
}

/**
 * The main repository of `cwd`: the main worktree's folder when the common Git directory is its `.git`, else the
 * common directory itself (a bare repository with linked worktrees), named without a `.git` suffix.
 */
export async function findMainRepository(cwd: string, options: GitLookupOptions = {}): Promise<GitLookup> {
  const output = await runGit(cwd, options);
  const [common, toplevel] = output.stdout.trim().split("\n");
  if (output.error || !common || !toplevel) {
    return { found: false, reason: failure(output, options.timeoutMs ?? GIT_TIMEOUT_MS) };
  }
  const commonDir = await real(common);
  const mainRoot = path.basename(commonDir) === ".git" ? path.dirname(commonDir) : commonDir;
  const name = path.basename(mainRoot).replace(/\.git$/, "") || path.basename(mainRoot);
  return { found: true, mainRoot, worktree: await real(toplevel), name };
}
