import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closeAll, isSafeName, openParentOf, openRoot, readChildFile } from "./safe-fs.js";

describe("safe tree access", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("refuses traversal names at every component", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-safe-"));
    await mkdir(path.join(dir, "root/sub"), { recursive: true });
    await writeFile(path.join(dir, "outside.md"), "outside");
    const root = await openRoot(path.join(dir, "root"));
    try {
      for (const name of ["..", ".", "", "a/b", "x\0y"]) expect(isSafeName(name)).toBe(false);
      await expect(readChildFile(root, "..", 1024)).rejects.toThrow(/unsafe name/);
      await expect(openParentOf(root, "../outside.md")).rejects.toThrow(/unsafe name/);
      await expect(openParentOf(root, "sub/../../outside.md")).rejects.toThrow(/unsafe name/);
    } finally {
      await closeAll([root]);
    }
  });

  it.runIf(process.getuid?.() === 0)("skips device files without reading them", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-safe-"));
    execFileSync("mknod", [path.join(dir, "zero.md"), "c", "1", "5"]);
    const root = await openRoot(dir);
    try {
      await expect(readChildFile(root, "zero.md", 1024)).rejects.toThrow(/special file/);
    } finally {
      await closeAll([root]);
    }
  });
});
