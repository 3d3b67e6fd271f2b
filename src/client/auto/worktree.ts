// `ivoai auto --worktree`: the whole session runs in a new git worktree on branch `ivoai/<session>`, so the
// user's checkout stays untouched until they merge. At the end, what the session changed is one commit there.
import { promises as fs, realpathSync } from "node:fs";
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { git, headCommit, type RepoRecord, repoRoot, runGit, snapshotRepo } from "./repo-snapshot.js";

/** The branch a session's worktree is on. */
export function worktreeBranch(sessionId: string): string {
  return `ivoai/${sessionId}`;
}

/** Where a session's worktree lives: the ivoai state folder, never inside the user's checkout. */
export function worktreeDir(stateDir: string, sessionId: string): string {
  return path.join(stateDir, "auto", "worktrees", sessionId);
}

/**
 * The repository record for a --worktree session, refusing (USAGE) outside a repository or in one without
 * commits. The base tree is the base commit's: the worktree starts from it, and uncommitted changes of the
 * checkout are not carried (the caller is told when there are some).
 */
export async function worktreeBase(cwd: string, env: NodeJS.ProcessEnv): Promise<RepoRecord> {
  const root = await repoRoot(cwd, env);
  if (root === null) {
    throw new IvoaiError("USAGE", `--worktree needs a git repository, and ${cwd} is not in one`);
  }
  if ((await headCommit(root, env)) === null) {
    throw new IvoaiError("USAGE", `--worktree needs a commit to start from, and ${root} has none yet`);
  }
  const snapshot = await snapshotRepo(root, env);
  if (snapshot?.base_commit == null) throw new IvoaiError("INTERNAL", `could not read the state of ${root}`);
  const tree = await git(["rev-parse", `${snapshot.base_commit}^{tree}`], { cwd: root, env });
  return { ...snapshot, base_tree: tree.trim() };
}

/** Creates the session's worktree on a new branch at the recorded base commit. */
export async function addWorktree(
  record: RepoRecord,
  sessionId: string,
  stateDir: string,
  env: NodeJS.ProcessEnv,
): Promise<NonNullable<RepoRecord["worktree"]>> {
  const dir = worktreeDir(stateDir, sessionId);
  const branch = worktreeBranch(sessionId);
  await fs.mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  await git(["worktree", "add", "--quiet", "-b", branch, dir, record.base_commit ?? "HEAD"], {
    cwd: record.root,
    env,
  });
  return { path: dir, branch };
}

/**
 * The folder the session works in: `cwd` itself, or with a worktree the same subfolder inside it (created
 * when the checkout has it only untracked).
 */
export function sessionCwd(cwd: string, repo: RepoRecord | null): string {
  if (!repo?.worktree) return cwd;
  const relative = path.relative(repo.root, realpathSync(cwd));
  if (relative.startsWith("..") || path.isAbsolute(relative)) return repo.worktree.path;
  return path.join(repo.worktree.path, relative);
}

/** Makes sure the session's folder exists inside its worktree. */
export async function ensureSessionCwd(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
}

/** Used when no git identity is configured, so the session's work is still committed. */
const FALLBACK_IDENTITY = { name: "ivoai", email: "ivoai@localhost" };

/**
 * Commits everything the session changed in its worktree as one commit on its branch, with the user's git
 * identity (or ivoai's fallback). Returns the commit, or null when the session changed nothing.
 */
export async function commitWorktree(
  sessionId: string,
  task: string,
  worktree: NonNullable<RepoRecord["worktree"]>,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const cwd = worktree.path;
  await git(["-c", "gc.auto=0", "add", "-A", "--", "."], { cwd, env });
  const staged = await runGit(["diff", "--cached", "--quiet"], { cwd, env });
  if (staged.code === 0) return null;
  const identity = await identityEnv(cwd, env);
  // No hooks and no signing: a headless session must not stop at a prompt or a linter; the user reviews it.
  await git(
    ["-c", "commit.gpgsign=false", "-c", "gc.auto=0", "commit", "--no-verify", "--quiet", "-F", "-"],
    {
      cwd,
      env: { ...env, ...identity },
      input: commitMessage(sessionId, task),
    },
  );
  return (await git(["rev-parse", "HEAD"], { cwd, env })).trim();
}

function commitMessage(sessionId: string, task: string): string {
  const first = oneLine(task.trim().split("\n", 1)[0] ?? "").trim();
  const bounded = first.length > 60 ? `${first.slice(0, 59)}…` : first;
  return `ivoai ${sessionId}: ${bounded}\n\nWhat the ivoai AUTO session ${sessionId} changed (ivoai auto --worktree).\n`;
}

/** The GIT_AUTHOR_ and GIT_COMMITTER_ name and email for what neither git's configuration nor the environment says. */
async function identityEnv(cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const configured = async (key: string) =>
    (await runGit(["config", "--get", key], { cwd, env })).stdout.trim() !== "";
  const identity: Record<string, string> = {};
  for (const role of ["AUTHOR", "COMMITTER"] as const) {
    if (!env[`GIT_${role}_NAME`] && !(await configured("user.name")))
      identity[`GIT_${role}_NAME`] = FALLBACK_IDENTITY.name;
    if (!env[`GIT_${role}_EMAIL`] && !env.EMAIL && !(await configured("user.email")))
      identity[`GIT_${role}_EMAIL`] = FALLBACK_IDENTITY.email;
  }
  return identity;
}

/** What the user reads at the end of a --worktree session: where its work is, and how to review and merge it. */
export function reviewLines(sessionId: string, repo: RepoRecord, commit: string | null): string[] {
  const worktree = repo.worktree;
  if (!worktree) return [];
  const where = `the session worked in ${worktree.path} on branch ${worktree.branch}`;
  return [
    commit
      ? `${where}: its changes are commit ${commit.slice(0, 12)}; your checkout ${repo.root} is untouched`
      : `${where} and changed nothing; your checkout ${repo.root} is untouched`,
    `  review: ivoai session diff ${sessionId}`,
    `  merge:  git -C ${shellWord(repo.root)} merge ${worktree.branch}`,
    `  remove: git -C ${shellWord(repo.root)} worktree remove ${shellWord(worktree.path)} && git -C ${shellWord(repo.root)} branch -D ${worktree.branch}`,
  ];
}

/** A path as a shell word the user can paste. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}
