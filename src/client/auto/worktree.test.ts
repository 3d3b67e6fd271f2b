import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addWorktree, commitWorktree, reviewLines, sessionCwd, worktreeBase } from "./worktree.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const ID = "ses_0123456789abcdef";
const git = (cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  execFileSync("git", args, { cwd, env, encoding: "utf8" }).trim();

/** A repository with one commit and a git identity in its HOME's configuration. */
async function setup(): Promise<{ repo: string; state: string; env: NodeJS.ProcessEnv }> {
  const top = realpathSync(await mkdtemp(path.join(tmpdir(), "ivoai-wt-")));
  dirs.push(top);
  const repo = path.join(top, "repo");
  const state = path.join(top, "state");
  mkdirSync(path.join(repo, "app"), { recursive: true });
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: top, GIT_CONFIG_NOSYSTEM: "1" };
  await writeFile(path.join(top, ".gitconfig"), "[user]\n\tname = Dev Eloper\n\temail = dev@example.test\n");
  await writeFile(path.join(repo, "app", "main.txt"), "main\n");
  git(repo, env, "init", "-q");
  git(repo, env, "add", ".");
  git(repo, env, "commit", "-q", "-m", "first");
  return { repo, state, env };
}

describe("the --worktree session", () => {
  it("starts from HEAD in the same subfolder and commits the session's work with the user's identity", async () => {
    const { repo, state, env } = await setup();
    await writeFile(path.join(repo, "app", "main.txt"), "uncommitted\n");
    const base = await worktreeBase(path.join(repo, "app"), env);
    expect(base).toMatchObject({
      root: repo,
      dirty: true,
      base_tree: git(repo, env, "rev-parse", "HEAD^{tree}"),
    });
    base.worktree = await addWorktree(base, ID, state, env);
    expect(base.worktree).toEqual({ path: path.join(state, "auto", "worktrees", ID), branch: `ivoai/${ID}` });
    const cwd = sessionCwd(path.join(repo, "app"), base);
    expect(cwd).toBe(path.join(base.worktree.path, "app"));
    expect(git(cwd, env, "show", "HEAD:app/main.txt")).toBe("main");

    expect(await commitWorktree(ID, "Add notes\nwith details", base.worktree, env)).toBeNull();
    await writeFile(path.join(cwd, "notes.md"), "notes\n");
    const commit = await commitWorktree(ID, `${"Add notes ".repeat(10)}\nwith details`, base.worktree, env);
    expect(git(repo, env, "rev-parse", `ivoai/${ID}`)).toBe(commit);
    const [author, subject] = git(repo, env, "log", "-1", "--format=%an <%ae>%n%s", `ivoai/${ID}`).split(
      "\n",
    );
    expect(author).toBe("Dev Eloper <dev@example.test>");
    expect(subject).toMatch(new RegExp(`^ivoai ${ID}: Add notes Add notes .{30,50}…$`));
    expect(git(repo, env, "status", "--porcelain")).toBe("M app/main.txt");

    const lines = reviewLines(ID, base, commit);
    expect(lines[0]).toContain(`its changes are commit ${commit?.slice(0, 12)}`);
    expect(lines.join("\n")).toContain(`git -C ${repo} merge ivoai/${ID}`);
  });

  it("refuses outside a repository and in one without commits", async () => {
    const { repo, env } = await setup();
    const outside = path.dirname(repo);
    const ceiling = { ...env, GIT_CEILING_DIRECTORIES: path.dirname(outside) };
    await expect(worktreeBase(outside, ceiling)).rejects.toMatchObject({ code: "USAGE" });
    const empty = path.join(outside, "empty");
    mkdirSync(empty);
    git(empty, env, "init", "-q");
    await expect(worktreeBase(empty, env)).rejects.toThrow(/needs a commit to start from/);
  });
});
