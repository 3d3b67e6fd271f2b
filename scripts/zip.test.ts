import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module script without types (run by `npm run release`).
import { zipStored } from "./zip.mjs";
import { readZip } from "./zip.test-kit.js";

const hasUnzip = spawnSync("unzip", ["-v"], { stdio: "ignore" }).status === 0;

describe("zipStored", () => {
  it("writes the files and their folders, sorted, with one fixed time and fixed modes", () => {
    const zip = zipStored({ "skill/b.md": "bee\n", "skill/SKILL.md": "hello ü\n", "skill/ref/c.txt": "" });
    const entries = readZip(zip);
    expect(entries.map((e) => e.name)).toEqual([
      "skill/",
      "skill/SKILL.md",
      "skill/b.md",
      "skill/ref/",
      "skill/ref/c.txt",
    ]);
    expect(entries[1]?.data.toString("utf8")).toBe("hello ü\n");
    expect(entries.map((e) => e.mode.toString(8))).toEqual(["40755", "100644", "100644", "40755", "100644"]);
    // 1980-01-01 00:00:00 in MS-DOS form.
    expect(new Set(entries.map((e) => `${e.date}/${e.time}`))).toEqual(new Set(["33/0"]));
  });

  it("gives the same bytes whatever the order the files come in", () => {
    const one = zipStored({ "a/x": "1", "a/y": "2", "b/z": "3" });
    const other = zipStored({ "b/z": "3", "a/y": "2", "a/x": "1" });
    expect(one.equals(other)).toBe(true);
    expect(one.equals(zipStored({ "a/x": "1", "a/y": "2", "b/z": "4" }))).toBe(false);
  });

  it("refuses names that would escape or are ambiguous", () => {
    for (const name of ["/etc/passwd", "a/../b", "./a", "a//b", "a\\b", ""]) {
      expect(() => zipStored({ [name]: "x" }), name).toThrow(/bad entry name/);
    }
  });

  it.skipIf(!hasUnzip)("is read by Info-ZIP unzip with its names, modes and contents", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-zip-"));
    try {
      const file = path.join(dir, "t.zip");
      await writeFile(file, zipStored({ "skill/SKILL.md": "hello\n", "skill/ref/c.txt": "see\n" }));
      expect(execFileSync("unzip", ["-t", file], { encoding: "utf8" })).toMatch(/No errors detected/);
      expect(execFileSync("unzip", ["-p", file, "skill/ref/c.txt"], { encoding: "utf8" })).toBe("see\n");
      expect(execFileSync("zipinfo", [file], { encoding: "utf8" })).toMatch(
        /-rw-r--r-- {2}2\.0 unx {8}6 b- stor 80-Jan-01 00:00 skill\/SKILL\.md/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
