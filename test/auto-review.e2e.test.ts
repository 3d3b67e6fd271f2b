// Reviewing what an AUTO session changed: the built ivoai against the fake codex/claude, whose consolidation
// turn writes a file, in real git repositories. `session diff` shows exactly that file; `--worktree` leaves the
// user's checkout byte-identical and puts the change on branch ivoai/<session>.
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { autoJsonLines, BIN, type RunResult, tempDir } from "./helpers.js";

const NOTE = "# Review\n\nThe canary stage is in place.\n";

/** Runs the built ivoai in `cwd` (runIvoai always runs in the test's own folder). */
function ivoaiIn(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      timeout: 120_000,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end("");
  });
}

/** sha256 of every file under `dir`, by relative path, except git's object store, refs, logs and worktree list. */
function hashTree(dir: string, skip: (relative: string) => boolean, base = dir): Map<string, string> {
  const hashes = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const relative = path.relative(base, full);
    if (skip(relative)) continue;
    if (entry.isDirectory()) for (const [key, value] of hashTree(full, skip, base)) hashes.set(key, value);
    else hashes.set(relative, createHash("sha256").update(readFileSync(full)).digest("hex"));
  }
  return hashes;
}

const GIT_METADATA = /^\.git\/(objects|refs|logs|worktrees)(\/|$)|^\.git\/packed-refs$/;

describe("reviewing what an AUTO session changed", () => {
  const cleanups: (() => Promise<void>)[] = [];
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;
  let home: string;
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, env, encoding: "utf8" }).replace(/\n$/, "");

  /** A repository with one commit, a subfolder and an ignored file. */
  const newRepo = async (): Promise<string> => {
    const made = await tempDir("ivoai-review-repo-");
    cleanups.push(made.cleanup);
    const repo = realpathSync(made.dir);
    mkdirSync(path.join(repo, "app"));
    writeFileSync(path.join(repo, ".gitignore"), "*.log\n");
    writeFileSync(path.join(repo, "app", "main.txt"), "main\n");
    git(repo, "init", "-q");
    git(repo, "add", ".");
    git(repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.test", "commit", "-q", "-m", "first");
    return repo;
  };
  const consolidationWrites = async (writes: Record<string, string>) => {
    await fakes.reset();
    await fakes.script({ codex: { turns: { consolidate: [{ reply: "Written.", writes }] } }, claude: {} });
  };
  const sessionCount = async () =>
    (JSON.parse((await ivoaiIn(home, ["session", "list", "--json"], env)).stdout) as { sessions: unknown[] })
      .sessions.length;

  beforeAll(async () => {
    const xdg = await tempDir("ivoai-review-client-");
    cleanups.push(xdg.cleanup);
    home = xdg.dir;
    fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
    env = {
      ...fakes.env,
      PATH: `${fakes.binDir}:${process.env.PATH}`,
      XDG_CONFIG_HOME: path.join(xdg.dir, "config"),
      XDG_STATE_HOME: path.join(xdg.dir, "state"),
      XDG_DATA_HOME: path.join(xdg.dir, "data"),
      XDG_CACHE_HOME: path.join(xdg.dir, "cache"),
      // No git identity anywhere: the worktree commit uses ivoai's fallback.
      HOME: home,
      GIT_CONFIG_NOSYSTEM: "1",
      IVOAI_KILL_AFTER_MS: "500",
    };
  });
  afterAll(async () => {
    await fakes?.killAll();
    for (const cleanup of cleanups) await cleanup();
  });

  it("session diff shows exactly the file the session wrote, as a unified diff, per file and in --json", async () => {
    const repo = await newRepo();
    // Already there at the start (untracked, and ignored): neither is the session's change.
    writeFileSync(path.join(repo, "app", "draft.txt"), "mine\n");
    writeFileSync(path.join(repo, "build.log"), "noise\n");
    await consolidationWrites({ "notes/review.md": NOTE });
    const run = await ivoaiIn(path.join(repo, "app"), ["auto", "--json", "--", "Add a canary stage"], env);
    expect(run.code, run.stderr).toBe(0);
    const result = autoJsonLines<{
      session_id: string;
      repo: { root: string; base_commit: string; dirty: boolean; worktree: unknown };
    }>(run.stdout).result;
    expect(result.repo).toMatchObject({ root: repo, dirty: true, worktree: null });
    expect(result.repo.base_commit).toBe(git(repo, "rev-parse", "HEAD"));
    expect(readFileSync(path.join(repo, "app", "notes", "review.md"), "utf8")).toBe(NOTE);
    const id = result.session_id;

    const text = await ivoaiIn(repo, ["session", "diff", id], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("diff --git a/app/notes/review.md b/app/notes/review.md");
    expect(text.stdout).toContain("+The canary stage is in place.");
    expect(text.stdout.match(/^diff --git /gm)).toHaveLength(1);

    const json = await ivoaiIn(repo, ["session", "diff", id, "--json"], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      session_id: id,
      base_commit: result.repo.base_commit,
      worktree: null,
      files: [{ path: "app/notes/review.md", status: "added", additions: 3, deletions: 0 }],
    });
    const stat = await ivoaiIn(repo, ["session", "diff", id, "--stat"], env);
    expect(stat.stdout).toMatch(/^A app\/notes\/review\.md {2}\+3 -0\n1 file changed, \+3 -0\n$/);
    // The base is kept by a ref under refs/ivoai, not a branch the user sees.
    expect(git(repo, "for-each-ref", "--format=%(refname)", "refs/ivoai")).toBe(
      `refs/ivoai/sessions/${id}/base`,
    );
    expect(git(repo, "branch", "--list")).not.toContain("ivoai");
  });

  it("--worktree leaves the checkout byte-identical and puts the session's change on branch ivoai/<id>", async () => {
    const repo = await newRepo();
    // A dirty checkout: a modified tracked file, a staged file and an untracked one (none carried over).
    writeFileSync(path.join(repo, "app", "main.txt"), "edited by me\n");
    writeFileSync(path.join(repo, "staged.txt"), "staged\n");
    git(repo, "add", "staged.txt");
    writeFileSync(path.join(repo, "app", "draft.txt"), "mine\n");
    const skip = (relative: string) => GIT_METADATA.test(relative);
    const before = hashTree(repo, skip);
    expect(before.has(".git/index")).toBe(true);
    await consolidationWrites({ "notes/review.md": NOTE });

    const run = await ivoaiIn(
      path.join(repo, "app"),
      ["auto", "--worktree", "--json", "--", "Add a canary stage"],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const result = autoJsonLines<{
      session_id: string;
      repo: { base_commit: string; dirty: boolean; worktree: { path: string; branch: string } };
    }>(run.stdout).result;
    const id = result.session_id;
    const branch = `ivoai/${id}`;
    expect(result.repo).toMatchObject({ dirty: true, worktree: { branch } });
    const worktree = result.repo.worktree.path;
    expect(worktree.startsWith(path.join(env.XDG_STATE_HOME as string, "ivoai"))).toBe(true);

    expect(hashTree(repo, skip)).toEqual(before);
    // The session worked in the same subfolder of its worktree.
    const consolidation = (await fakes.log()).find((turn) => turn.role === "consolidate");
    expect(consolidation?.cwd).toBe(path.join(worktree, "app"));
    expect(run.stderr).toMatch(/has uncommitted changes; the worktree starts from/);
    expect(run.stderr).toContain(`git -C ${repo} merge ${branch}`);
    expect(run.stderr).toContain(`ivoai session diff ${id}`);
    expect(run.stderr).toContain(`worktree remove ${worktree}`);

    // One commit on the branch, the fallback identity (none is configured), the session named.
    expect(git(repo, "rev-list", "--count", `${result.repo.base_commit}..${branch}`)).toBe("1");
    expect(git(repo, "show", `${branch}:app/notes/review.md`)).toBe(NOTE.replace(/\n$/, ""));
    expect(git(repo, "diff", "--name-only", result.repo.base_commit, branch)).toBe("app/notes/review.md");
    expect(git(repo, "log", "-1", "--format=%an <%ae>|%s", branch)).toBe(
      `ivoai <ivoai@localhost>|ivoai ${id}: Add a canary stage`,
    );

    const diff = await ivoaiIn(repo, ["session", "diff", id, "--json"], env);
    expect(diff.code, diff.stderr).toBe(0);
    expect(JSON.parse(diff.stdout)).toMatchObject({
      worktree: { path: worktree, branch },
      files: [{ path: "app/notes/review.md", status: "added" }],
    });
    expect(JSON.parse(diff.stdout).files).toHaveLength(1);
    const shown = await ivoaiIn(repo, ["session", "show", id], env);
    expect(shown.stdout).toContain(`worktree:    ${worktree} on branch ${branch}`);
    expect(shown.stdout).toMatch(/repository: {2}.* with uncommitted changes/);
    // Once the worktree is removed, its branch still answers.
    git(repo, "worktree", "remove", worktree);
    const fromBranch = await ivoaiIn(repo, ["session", "diff", id, "--stat"], env);
    expect(fromBranch.stdout).toContain("A app/notes/review.md");
  });

  it("refuses --worktree outside a repository and in one without commits, before any session starts", async () => {
    const outside = await tempDir("ivoai-review-plain-");
    cleanups.push(outside.cleanup);
    const plainEnv = { ...env, GIT_CEILING_DIRECTORIES: path.dirname(realpathSync(outside.dir)) };
    await fakes.script({ codex: {}, claude: {} });
    const sessions = await sessionCount();
    const refused = await ivoaiIn(outside.dir, ["auto", "--worktree", "--", "Add a canary stage"], plainEnv);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--worktree needs a git repository/);
    expect(refused.stdout).toBe("");

    const empty = path.join(outside.dir, "empty");
    mkdirSync(empty);
    git(empty, "init", "-q");
    const noCommit = await ivoaiIn(empty, ["auto", "--worktree", "--", "Add a canary stage"], plainEnv);
    expect(noCommit.code).toBe(2);
    expect(noCommit.stderr).toMatch(/--worktree needs a commit to start from/);
    expect(await sessionCount()).toBe(sessions);

    const direct = await ivoaiIn(
      outside.dir,
      ["session", "start", "--executor", "codex", "--worktree"],
      plainEnv,
    );
    expect(direct.code).toBe(2);
    expect(direct.stderr).toMatch(/--worktree applies to --mode orchestrated only/);

    // A session outside a repository runs as before; its diff says why there is none.
    await fakes.script({ codex: {}, claude: {} });
    const plain = await ivoaiIn(outside.dir, ["auto", "--json", "--", "Add a canary stage"], plainEnv);
    expect(plain.code, plain.stderr).toBe(0);
    const id = autoJsonLines<{ session_id: string; repo: unknown }>(plain.stdout).result;
    expect(id.repo).toBeNull();
    const diff = await ivoaiIn(outside.dir, ["session", "diff", id.session_id], plainEnv);
    expect(diff.code).toBe(1);
    expect(diff.stderr).toMatch(/has no repository record: it ran outside a git repository/);
    const missing = await ivoaiIn(outside.dir, ["session", "diff", "ses_0000000000000000"], plainEnv);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no session ses_0000000000000000/);
  });
});
