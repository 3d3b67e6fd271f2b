import { lstat, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ApplyStep, applySystemdPlan, realApplyDeps } from "./systemd-apply.js";

describe.runIf(process.getuid?.() === 0)("applySystemdPlan as root", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const deps = realApplyDeps(() => {});

  it("never follows a symbolic link planted in a tree it owns, nor one standing for the tree", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-apply-"));
    dirs.push(dir);
    const outside = path.join(dir, "outside");
    await mkdir(outside, { mode: 0o755 });
    await writeFile(path.join(outside, "file"), "x", { mode: 0o644 });
    const tree = path.join(dir, "tree");
    await mkdir(path.join(tree, "sub"), { recursive: true });
    await symlink(outside, path.join(tree, "sub", "link-dir"));
    await symlink(path.join(outside, "file"), path.join(tree, "link-file"));
    await symlink(outside, path.join(dir, "swapped"));

    const own = (target: string): ApplyStep => ({
      kind: "own",
      path: target,
      user: "nobody",
      group: "nogroup",
      mode: 0o700,
      recursive: true,
    });
    await applySystemdPlan([own(tree)], deps);
    expect((await stat(tree)).uid).toBe(65534);
    expect((await stat(tree)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(tree, "sub"))).uid).toBe(65534);
    expect((await lstat(path.join(tree, "sub", "link-dir"))).uid).toBe(65534);
    await expect(applySystemdPlan([own(path.join(dir, "swapped"))], deps)).rejects.toThrow(
      `refusing to own ${path.join(dir, "swapped")}: it is a symbolic link`,
    );
    for (const target of [outside, path.join(outside, "file")]) {
      const info = await stat(target);
      expect({ uid: info.uid, mode: info.mode & 0o777 }, target).toEqual({
        uid: 0,
        mode: target === outside ? 0o755 : 0o644,
      });
    }
  });
});
