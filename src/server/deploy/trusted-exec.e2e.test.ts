import { chmod, chown, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { untrustedExecPath } from "./trusted-exec.js";

describe.runIf(process.getuid?.() === 0)("untrustedExecPath", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("names the first path of node, the entry or its package that someone other than root can change", async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), "ivoai-exec-")));
    dirs.push(dir);
    const pkg = path.join(dir, "lib/node_modules/ivoai");
    await mkdir(path.join(pkg, "dist"), { recursive: true });
    await mkdir(path.join(pkg, "node_modules/dep"), { recursive: true });
    await writeFile(path.join(pkg, "package.json"), "{}");
    await writeFile(path.join(pkg, "node_modules/dep/index.js"), "");
    const entry = path.join(pkg, "dist/ivoai.mjs");
    await writeFile(entry, "");
    const node = process.execPath;
    expect(await untrustedExecPath(node, entry)).toBeNull();

    await chmod(path.join(pkg, "node_modules/dep"), 0o757);
    expect(await untrustedExecPath(node, entry)).toEqual({
      path: path.join(pkg, "node_modules/dep"),
      reason: "writable by its group or others (mode 757)",
    });
    await chmod(path.join(pkg, "node_modules/dep"), 0o755);
    await chmod(path.join(dir, "lib"), 0o777);
    expect(await untrustedExecPath(node, entry)).toEqual({
      path: path.join(dir, "lib"),
      reason: "writable by its group or others (mode 777)",
    });
    await chmod(path.join(dir, "lib"), 0o755);
    await chown(entry, 1000, 1000);
    expect(await untrustedExecPath(node, entry)).toEqual({
      path: entry,
      reason: "owned by uid 1000, not root",
    });
  });
});
