// `ivoai session diff ID`: what an AUTO session changed, as the difference between the tree recorded at its
// start and its folder now (its worktree when it had one), snapshotted the same private way.
import { existsSync } from "node:fs";
import { IvoaiError } from "../../shared/errors.js";
import type { SessionView } from "../session/store.js";
import { baseRef, git, type RepoRecord, runGit, workingTree } from "./repo-snapshot.js";

export type ChangeStatus = "added" | "modified" | "deleted" | "type-changed";

export interface ChangedFile {
  path: string;
  status: ChangeStatus;
  /** Lines added and deleted; null for a binary file. */
  additions: number | null;
  deletions: number | null;
}

export interface SessionDiff {
  session_id: string;
  base_commit: string | null;
  base_tree: string;
  worktree: RepoRecord["worktree"];
  /** The tree compared with the base: the session's folder now, or its branch when the worktree is gone. */
  compared: { source: "worktree" | "branch" | "checkout"; path: string; tree: string };
  files: ChangedFile[];
}

const STATUS: Record<string, ChangeStatus> = { A: "added", M: "modified", D: "deleted", T: "type-changed" };

/** The files a session changed since its base; `patch` also gives git's unified diff. */
export async function sessionDiff(
  session: SessionView,
  env: NodeJS.ProcessEnv,
): Promise<{ diff: SessionDiff; patch: () => Promise<string> }> {
  const repo = recordOf(session);
  if (!existsSync(repo.root)) {
    throw new IvoaiError("NOT_FOUND", `the repository of session ${session.id} is gone: ${repo.root}`);
  }
  await requireBase(session.id, repo, env);
  const compared = await currentTree(session.id, repo, env);
  const range = [repo.base_tree, compared.tree];
  const files = await changedFiles(repo.root, range, env);
  return {
    diff: {
      session_id: session.id,
      base_commit: repo.base_commit,
      base_tree: repo.base_tree,
      worktree: repo.worktree,
      compared,
      files,
    },
    patch: () =>
      git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", ...range], {
        cwd: repo.root,
        env,
      }),
  };
}

function recordOf(session: SessionView): RepoRecord {
  if (!session.auto) {
    throw new IvoaiError(
      "NOT_FOUND",
      `session ${session.id} is not an AUTO session: ivoai recorded no repository state for it`,
    );
  }
  if (!session.auto.repo) {
    throw new IvoaiError(
      "NOT_FOUND",
      `session ${session.id} has no repository record: it ran outside a git repository (or git could not tell)`,
    );
  }
  return session.auto.repo;
}

async function requireBase(sessionId: string, repo: RepoRecord, env: NodeJS.ProcessEnv): Promise<void> {
  const found = await runGit(["cat-file", "-e", `${repo.base_tree}^{tree}`], { cwd: repo.root, env });
  if (found.code !== 0) {
    throw new IvoaiError(
      "NOT_FOUND",
      `the base of session ${sessionId} (tree ${repo.base_tree.slice(0, 12)}) is no longer in ${repo.root}: it was pruned (was ${baseRef(sessionId)} deleted?)`,
    );
  }
}

/** The session's folder as it is now; a removed worktree falls back to its branch, which holds its commit. */
async function currentTree(
  sessionId: string,
  repo: RepoRecord,
  env: NodeJS.ProcessEnv,
): Promise<SessionDiff["compared"]> {
  const worktree = repo.worktree;
  if (!worktree) return { source: "checkout", path: repo.root, tree: await workingTree(repo.root, env) };
  if (existsSync(worktree.path)) {
    return { source: "worktree", path: worktree.path, tree: await workingTree(worktree.path, env) };
  }
  const branch = await runGit(["rev-parse", "--verify", "--quiet", `refs/heads/${worktree.branch}^{tree}`], {
    cwd: repo.root,
    env,
  });
  if (branch.code !== 0) {
    throw new IvoaiError(
      "NOT_FOUND",
      `session ${sessionId}'s worktree ${worktree.path} and its branch ${worktree.branch} are both gone`,
    );
  }
  return { source: "branch", path: worktree.branch, tree: branch.stdout.trim() };
}

/** Status and line counts per path, from git's NUL-separated name-status and numstat. */
async function changedFiles(root: string, range: string[], env: NodeJS.ProcessEnv): Promise<ChangedFile[]> {
  const options = { cwd: root, env };
  const statuses = (await git(["diff", "--no-renames", "-z", "--name-status", ...range], options)).split(
    "\0",
  );
  const counts = new Map<string, { additions: number | null; deletions: number | null }>();
  for (const entry of (await git(["diff", "--no-renames", "-z", "--numstat", ...range], options)).split(
    "\0",
  )) {
    const match = /^(-|\d+)\t(-|\d+)\t([\s\S]*)$/.exec(entry);
    if (!match) continue;
    const count = (value: string | undefined) =>
      value === "-" || value === undefined ? null : Number(value);
    counts.set(match[3] ?? "", { additions: count(match[1]), deletions: count(match[2]) });
  }
  const files: ChangedFile[] = [];
  for (let at = 0; at + 1 < statuses.length; at += 2) {
    const letter = statuses[at] ?? "";
    const file = statuses[at + 1] ?? "";
    if (letter === "") continue;
    const { additions = null, deletions = null } = counts.get(file) ?? {};
    files.push({ path: file, status: STATUS[letter[0] ?? ""] ?? "modified", additions, deletions });
  }
  return files;
}
