import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { baseRef, pinBase, snapshotRepo } from "./repo-snapshot.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function temp(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "ivoai-snap-"));
  dirs.push(dir);
  return dir;
}

/** A git environment that reads no configuration of the machine's user. */
function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "T",
    GIT_AUTHOR_EMAIL: "t@example.test",
    GIT_COMMITTER_NAME: "T",
    GIT_COMMITTER_EMAIL: "t@example.test",
  };
}

const run = (cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  execFileSync("git", args, { cwd, env, encoding: "utf8" }).trim();

const sha = async (file: string) =>
  createHash("sha256")
    .update(await readFile(file))
    .digest("hex");

describe("snapshotRepo", () => {
  it("records HEAD and a tree of the working tree with untracked files, without ignored ones or touching the index", async () => {
    const repo = await temp();
    const env = gitEnv(repo);
    run(repo, env, "init", "-q");
    await writeFile(path.join(repo, ".gitignore"), "*.log\n");
    await writeFile(path.join(repo, "tracked.txt"), "one\n");
    run(repo, env, "add", ".");
    run(repo, env, "commit", "-q", "-m", "first");
    await writeFile(path.join(repo, "tracked.txt"), "two\n");
    mkdirSync(path.join(repo, "sub"));
    await writeFile(path.join(repo, "sub", "new.txt"), "untracked\n");
    await writeFile(path.join(repo, "noise.log"), "ignored\n");
    await writeFile(path.join(repo, "staged.txt"), "staged\n");
    run(repo, env, "add", "staged.txt");
    const index = path.join(repo, ".git", "index");
    const before = { index: await sha(index), status: run(repo, env, "status", "--porcelain") };

    const record = await snapshotRepo(path.join(repo, "sub"), env);

    expect(await sha(index)).toBe(before.index);
    expect(run(repo, env, "status", "--porcelain")).toBe(before.status);
    expect(record).toMatchObject({ root: repo, dirty: true, worktree: null });
    expect(record?.base_commit).toBe(run(repo, env, "rev-parse", "HEAD"));
    const files = run(repo, env, "ls-tree", "-r", "--name-only", record?.base_tree ?? "").split("\n");
    expect(files.sort()).toEqual([".gitignore", "staged.txt", "sub/new.txt", "tracked.txt"]);
    expect(run(repo, env, "cat-file", "-p", `${record?.base_tree}:tracked.txt`)).toBe("two");

    if (!record) throw new Error("no record");
    await pinBase(record, "ses_test", env);
    expect(run(repo, env, "rev-parse", baseRef("ses_test"))).toBe(record?.base_tree);
    expect(run(repo, env, "branch", "--list")).not.toContain("ivoai");
  });

  it("is clean when the working tree is HEAD, and has no base commit in a repository without commits", async () => {
    const repo = await temp();
    const env = gitEnv(repo);
    run(repo, env, "init", "-q");
    const empty = await snapshotRepo(repo, env);
    expect(empty).toMatchObject({ base_commit: null, dirty: false });
    await writeFile(path.join(repo, "a.txt"), "a\n");
    expect(await snapshotRepo(repo, env)).toMatchObject({ base_commit: null, dirty: true });
    run(repo, env, "add", ".");
    run(repo, env, "commit", "-q", "-m", "first");
    const clean = await snapshotRepo(repo, env);
    expect(clean).toMatchObject({ dirty: false, base_tree: run(repo, env, "rev-parse", "HEAD^{tree}") });
  });

  it("is null outside a git repository", async () => {
    const dir = await temp();
    expect(
      await snapshotRepo(dir, { ...gitEnv(dir), GIT_CEILING_DIRECTORIES: path.dirname(dir) }),
    ).toBeNull();
  });

  it("says clearly when git is missing", async () => {
    const dir = await temp();
    await expect(snapshotRepo(dir, { PATH: dir, HOME: dir })).rejects.toThrow(/git is not installed/);
  });
});
