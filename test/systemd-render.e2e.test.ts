// `ivoai server systemd render --out` through the built binary: a symbolic link for the output folder is refused.
import { mkdir, readdir, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runIvoai, tempDir } from "./helpers.js";

describe("ivoai server systemd render --out", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  it("refuses an output folder that is a symbolic link and writes nothing where it points", async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    // Stands for /etc: the folder a planted link would have root write the unit into.
    const etc = path.join(dir, "etc");
    await mkdir(etc);
    const out = path.join(dir, "units");
    await symlink(etc, out);
    const result = await runIvoai(["server", "systemd", "render", "--root", "/srv/ivoai", "--out", out]);
    expect(result.code, result.stdout).toBe(1);
    expect(result.stderr).toContain(`refusing --out ${out}: it is a symbolic link (to ${etc})`);
    expect(await readdir(etc)).toEqual([]);
  });
});
