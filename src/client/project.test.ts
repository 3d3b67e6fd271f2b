import { execFileSync } from "node:child_process";
import { promises as fs, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeIdentity, hostIdentity, initProject, resolveIdentity } from "./project.js";

let base: string;

function git(cwd: string, ...args: string[]): void {
  execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.test", "-c", "init.defaultBranch=main", ...args],
    {
      cwd,
      stdio: "pipe",
    },
  );
}

async function repository(name: string): Promise<string> {
  const dir = path.join(base, name);
  await fs.mkdir(dir, { recursive: true });
  git(dir, "init", "-q");
  git(dir, "commit", "-q", "--allow-empty", "-m", "first");
  return dir;
}

beforeAll(async () => {
  base = realpathSync(await fs.mkdtemp(path.join(tmpdir(), "ivoai-project-")));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo-root project identity", () => {
  it("gives two linked worktrees and a subfolder of one repository one project, and two repositories two", async () => {
    const main = await repository("api");
    git(main, "worktree", "add", "-q", "-b", "one", path.join(base, "api-one"));
    git(main, "worktree", "add", "-q", "-b", "two", path.join(base, "elsewhere", "api-two"));
    const sub = path.join(base, "api-one", "src", "deep");
    await fs.mkdir(sub, { recursive: true });
    const other = await repository("web");

    const seen = await Promise.all(
      [main, path.join(base, "api-one"), path.join(base, "elsewhere", "api-two"), sub].map((dir) =>
        resolveIdentity(dir),
      ),
    );
    expect(new Set(seen.map((i) => i.id)).size).toBe(1);
    for (const identity of seen) {
      expect(identity).toMatchObject({ kind: "project", rule: "git", name: "api", root: main, marker: null });
      expect(identity.id).toMatch(/^project:[0-9a-f]{16}$/);
    }
    const deep = await resolveIdentity(sub);
    expect(deep.worktree).toBe(path.join(base, "api-one"));
    expect(describeIdentity(deep)).toContain(`repo-root: main Git repository ${main}`);
    expect(describeIdentity(deep)).toContain(`worktree: ${path.join(base, "api-one")}`);

    const web = await resolveIdentity(other);
    expect(web).toMatchObject({ rule: "git", name: "web", root: other });
    expect(web.id).not.toBe(seen[0]?.id);
  });

  it("names a bare repository's worktrees after it without .git", async () => {
    const bare = path.join(base, "lib.git");
    await fs.mkdir(bare);
    git(bare, "init", "-q", "--bare");
    const seed = await repository("lib-seed");
    git(seed, "push", "-q", bare, "HEAD:main");
    git(bare, "worktree", "add", "-q", path.join(base, "lib-main"), "main");
    const identity = await resolveIdentity(path.join(base, "lib-main"));
    expect(identity).toMatchObject({ rule: "git", name: "lib", root: bare });
  });

  it("lets a .ivoai.toml marker win, and `project init` keeps the id the repository already had", async () => {
    const main = await repository("svc");
    git(main, "worktree", "add", "-q", "-b", "feature", path.join(base, "svc-feature"));
    const before = await resolveIdentity(path.join(base, "svc-feature"));
    const marked = await initProject(path.join(base, "svc-feature"));
    expect(marked.id).toBe(before.id);
    expect(marked.marker).toBe(path.join(base, "svc-feature", ".ivoai.toml"));
    const after = await resolveIdentity(path.join(base, "svc-feature"));
    expect(after).toMatchObject({ id: before.id, rule: "marker", name: "svc" });
    expect(describeIdentity(after)).toContain(`rule: marker: ${marked.marker}`);

    await fs.writeFile(path.join(main, ".ivoai.toml"), 'project_id = "project:chosen"\n');
    expect((await resolveIdentity(main)).id).toBe("project:chosen");
  });

  it("falls back to the host outside Git and when git is missing, saying why", async () => {
    const outside = path.join(base, "plain");
    await fs.mkdir(outside);
    const plain = await resolveIdentity(outside);
    expect(plain).toMatchObject({ id: hostIdentity(), kind: "host", rule: "host", root: null });
    expect(plain.reason).toBe("not inside a Git repository");
    expect(describeIdentity(plain)).toMatch(/rule: host: not inside a Git repository/);

    const repo = await repository("nogit");
    const empty = path.join(base, "empty-path");
    await fs.mkdir(empty);
    const noGit = await resolveIdentity(repo, { env: { PATH: empty } });
    expect(noGit).toMatchObject({ rule: "host", reason: "git is not installed (not found on PATH)" });
  });

  it("does not let a hook's GIT_DIR steer the lookup", async () => {
    const a = await repository("alpha");
    const b = await repository("beta");
    const identity = await resolveIdentity(a, {
      env: { PATH: process.env.PATH, GIT_DIR: path.join(b, ".git") },
    });
    expect(identity).toMatchObject({ name: "alpha", root: a });
  });
});
