// What an AUTO session changed must be reviewable afterwards, so the session records the repository it ran in:
// the commit checked out and a tree object of the whole working tree, written through a private index so the
// user's index and files are never touched. Everything goes through the `git` CLI (argv arrays, no shell).
import { spawn } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import type { AutoState } from "../session/auto-state.js";

/** The repository record of an AUTO session (see `AutoState["repo"]`). */
export type RepoRecord = NonNullable<AutoState["repo"]>;

/** How git is run: the caller's environment (the user's identity and configuration) and its folder. */
export interface GitOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to git's stdin (commit messages: never argv). */
  input?: string;
  /** A private index instead of the repository's own. */
  index?: string;
}

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git and returns whatever it exits with; only a missing git (or folder) is thrown, clearly. */
export function runGit(args: readonly string[], options: GitOptions): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      cwd: options.cwd,
      env: gitEnv(options.env, options.index),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.once("error", (error) => reject(spawnFailure(error, options.cwd)));
    child.once("close", (code) =>
      resolve({
        code: code ?? 1,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/** Runs git and returns its stdout; a non-zero exit is an error naming the command and git's first line. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0) {
    const said = oneLine(result.stderr.trim().split("\n")[0] ?? "").slice(0, 300);
    throw new IvoaiError(
      "INTERNAL",
      `git ${args[0] ?? ""} failed (exit ${result.code}): ${said || "no message"}`,
      {
        data: { exit: result.code },
      },
    );
  }
  return result.stdout;
}

/** spawn says ENOENT both for a missing git and a missing folder: tell the two apart. */
function spawnFailure(error: Error, cwd: string): IvoaiError {
  if (errnoCode(error) === "ENOENT" && !existsSync(cwd)) {
    return new IvoaiError("NOT_FOUND", `${cwd} does not exist`, { cause: error });
  }
  if (errnoCode(error) === "ENOENT") {
    return new IvoaiError("NOT_FOUND", "git is not installed (not on PATH); ivoai needs it for this", {
      cause: error,
    });
  }
  return new IvoaiError("INTERNAL", `could not run git: ${error.message}`, { cause: error });
}

/**
 * The caller's environment, with `index` (or the repository's own: a GIT_INDEX_FILE the caller exported is
 * dropped), no credential prompt, and no optional lock on the user's index (status refreshes).
 */
function gitEnv(env: NodeJS.ProcessEnv, index: string | undefined): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { ...env, GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0" };
  delete clean.GIT_INDEX_FILE;
  if (index !== undefined) clean.GIT_INDEX_FILE = index;
  return clean;
}

/** The top folder of the working tree `dir` is in, or null outside a git working tree (or without git). */
export async function repoRoot(dir: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const result = await runGit(["rev-parse", "--show-toplevel"], { cwd: dir, env });
  const root = result.stdout.trim();
  return result.code === 0 && root !== "" ? root : null;
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headCommit(root: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const result = await runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { cwd: root, env });
  return result.code === 0 ? result.stdout.trim() : null;
}

/**
 * A tree object of the working tree under `root` as it is now: tracked and untracked files, ignored ones not.
 * Written through a temporary index in a private folder (seeded with a copy of the real one, so unchanged files
 * are not hashed again); the user's index and files stay as they were.
 */
export async function workingTree(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  const temp = await fs.mkdtemp(path.join(tmpdir(), "ivoai-index-"));
  try {
    const index = path.join(temp, "index");
    const seeded = await seedIndex(root, env, index);
    try {
      return await treeThrough(root, env, index);
    } catch (error) {
      if (!seeded) throw error;
      // A copied index can refer to files beside the real one (split index): start from an empty one.
      await fs.rm(index, { force: true });
      return await treeThrough(root, env, index);
    }
  } finally {
    await fs.rm(temp, { recursive: true, force: true });
  }
}

async function seedIndex(root: string, env: NodeJS.ProcessEnv, index: string): Promise<boolean> {
  const real = (await git(["rev-parse", "--git-path", "index"], { cwd: root, env })).trim();
  try {
    await fs.copyFile(path.resolve(root, real), index);
    return true;
  } catch {
    return false;
  }
}

async function treeThrough(root: string, env: NodeJS.ProcessEnv, index: string): Promise<string> {
  // gc.auto=0: a snapshot never starts a garbage collection in the user's repository.
  await git(["-c", "gc.auto=0", "add", "-A", "--", "."], { cwd: root, env, index });
  return (await git(["write-tree"], { cwd: root, env, index })).trim();
}

/** The repository `dir` is in, its HEAD and its working tree now; null outside a git working tree. */
export async function snapshotRepo(
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RepoRecord | null> {
  const root = await repoRoot(dir, env);
  if (root === null) return null;
  const baseCommit = await headCommit(root, env);
  const baseTree = await workingTree(root, env);
  const headTree = baseCommit
    ? (await git(["rev-parse", `${baseCommit}^{tree}`], { cwd: root, env })).trim()
    : await emptyTree(root, env);
  return { root, base_commit: baseCommit, base_tree: baseTree, dirty: baseTree !== headTree, worktree: null };
}

/** The id of the empty tree in this repository's hash (SHA-1 or SHA-256). */
async function emptyTree(root: string, env: NodeJS.ProcessEnv): Promise<string> {
  return (await git(["hash-object", "-t", "tree", "--stdin"], { cwd: root, env, input: "" })).trim();
}

/** The ref that keeps a session's base tree from garbage collection; no branch the user sees. */
export function baseRef(sessionId: string): string {
  return `refs/ivoai/sessions/${sessionId}/base`;
}

/** Keeps the recorded base tree reachable under `refs/ivoai/sessions/<id>/base`. */
export async function pinBase(record: RepoRecord, sessionId: string, env: NodeJS.ProcessEnv): Promise<void> {
  await git(["update-ref", baseRef(sessionId), record.base_tree], { cwd: record.root, env });
}
