import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeUnitFiles } from "./unit-files.js";

const UNITS = [{ name: "ivoai-gateway.service", content: "[Unit]\n" }];

describe("writeUnitFiles", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-units-"));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it("creates a missing folder and writes each unit 0644", async () => {
    const out = path.join(dir, "a/units");
    expect(await writeUnitFiles(out, UNITS)).toEqual([path.join(out, "ivoai-gateway.service")]);
    expect((await stat(path.join(out, "ivoai-gateway.service"))).mode & 0o777).toBe(0o644);
  });

  it("refuses an output folder that is a symbolic link, writing nothing where it points", async () => {
    const elsewhere = path.join(dir, "etc");
    await mkdir(elsewhere);
    const out = path.join(dir, "units");
    await symlink(elsewhere, out);
    await expect(writeUnitFiles(out, UNITS)).rejects.toThrow(
      `refusing --out ${out}: it is a symbolic link (to ${elsewhere})`,
    );
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("refuses a unit file inside the folder that is a symbolic link, leaving its target as it was", async () => {
    const target = path.join(dir, "passwd");
    await writeFile(target, "root:x:0:0\n");
    const out = path.join(dir, "units");
    await mkdir(out);
    await symlink(target, path.join(out, "ivoai-gateway.service"));
    await expect(writeUnitFiles(out, UNITS)).rejects.toThrow(/ivoai-gateway.service: it is a symbolic link/);
    expect(await readFile(target, "utf8")).toBe("root:x:0:0\n");
  });

  it("refuses an output path that is a file", async () => {
    const out = path.join(dir, "file");
    await writeFile(out, "");
    await expect(writeUnitFiles(out, UNITS)).rejects.toThrow(/not a directory/);
  });
});
