import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SessionView } from "../session/store.js";
import { pinBase, type RepoRecord, snapshotRepo } from "./repo-snapshot.js";
import { sessionDiff } from "./session-diff.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const ID = "ses_0123456789abcdef";

async function repoWithCommit(): Promise<{ repo: string; env: NodeJS.ProcessEnv }> {
  const repo = realpathSync(await mkdtemp(path.join(tmpdir(), "ivoai-diff-")));
  dirs.push(repo);
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: repo,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "T",
    GIT_AUTHOR_EMAIL: "t@example.test",
    GIT_COMMITTER_NAME: "T",
    GIT_COMMITTER_EMAIL: "t@example.test",
  };
  await writeFile(path.join(repo, "keep.txt"), "one\ntwo\n");
  await writeFile(path.join(repo, "gone.txt"), "bye\n");
  git(repo, env, "init", "-q");
  git(repo, env, "add", ".");
  git(repo, env, "commit", "-q", "-m", "first");
  return { repo, env };
}

const git = (cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  execFileSync("git", args, { cwd, env, encoding: "utf8" }).trim();

/** The part of a session record the diff reads. */
const sessionWith = (repo: RepoRecord | null, auto = true) =>
  ({ id: ID, auto: auto ? { repo } : null }) as unknown as SessionView;

describe("sessionDiff", () => {
  it("lists added, modified, deleted and binary files with their line counts, and git's patch", async () => {
    const { repo, env } = await repoWithCommit();
    const base = await snapshotRepo(repo, env);
    if (!base) throw new Error("no snapshot");
    await pinBase(base, ID, env);
    await writeFile(path.join(repo, "keep.txt"), "one\nTWO\nthree\n");
    await rm(path.join(repo, "gone.txt"));
    await writeFile(path.join(repo, "blob.bin"), Buffer.from([0, 1, 2, 0, 255]));
    const { diff, patch } = await sessionDiff(sessionWith(base), env);
    expect(diff.files).toEqual([
      { path: "blob.bin", status: "added", additions: null, deletions: null },
      { path: "gone.txt", status: "deleted", additions: 0, deletions: 1 },
      { path: "keep.txt", status: "modified", additions: 2, deletions: 1 },
    ]);
    expect(diff.compared.source).toBe("checkout");
    const text = await patch();
    expect(text).toContain("Binary files /dev/null and b/blob.bin differ");
    expect(text).toContain("+TWO");
  });

  it("says which record is missing, and when the repository or the base is gone", async () => {
    const { repo, env } = await repoWithCommit();
    await expect(sessionDiff(sessionWith(null, false), env)).rejects.toThrow(/not an AUTO session/);
    await expect(sessionDiff(sessionWith(null), env)).rejects.toThrow(/has no repository record/);
    const base = await snapshotRepo(repo, env);
    if (!base) throw new Error("no snapshot");
    await expect(sessionDiff(sessionWith({ ...base, root: path.join(repo, "moved") }), env)).rejects.toThrow(
      /the repository of session .* is gone/,
    );
    const pruned = { ...base, base_tree: "0".repeat(40) };
    await expect(sessionDiff(sessionWith(pruned), env)).rejects.toThrow(/is no longer in .*: it was pruned/);
    const worktree = { path: path.join(repo, "no-worktree"), branch: "ivoai/nothing" };
    await expect(sessionDiff(sessionWith({ ...base, worktree }), env)).rejects.toThrow(
      /worktree .* and its branch ivoai\/nothing are both gone/,
    );
  });
});
