import { mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger, createRotatingFile } from "./logger.js";

describe("createRotatingFile", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  const fresh = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-log-"));
    dirs.push(dir);
    return dir;
  };
  /** Every line of the live file and its rotated copies, oldest first. */
  const allLines = async (file: string, keep: number) => {
    const lines: string[] = [];
    for (let index = keep; index >= 0; index -= 1) {
      const name = index === 0 ? file : `${file}.${index}`;
      const text = await readFile(name, "utf8").catch(() => "");
      lines.push(...text.split("\n").filter(Boolean));
    }
    return lines;
  };

  it("rotates by size without losing, splitting or reordering a line, in the logger's line format", async () => {
    const file = path.join(await fresh(), "server.log");
    const sink = createRotatingFile({ file, maxBytes: 1024, keep: 100 });
    const logger = createLogger({ write: sink.write, now: () => new Date(0) });
    for (let index = 0; index < 300; index += 1) logger.info("request", { n: index });
    sink.close();
    const lines = await allLines(file, 100);
    expect(lines).toHaveLength(300);
    expect(lines.map((line) => (JSON.parse(line) as { n: number }).n)).toEqual([...Array(300).keys()]);
    expect(lines[0]).toBe('{"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":"request","n":0}');
    const names = await readdir(path.dirname(file));
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) {
      const info = await stat(path.join(path.dirname(file), name));
      expect(info.size).toBeLessThanOrEqual(1024);
      expect(info.mode & 0o777).toBe(0o600);
    }
  });

  it("keeps only --log-keep rotated files, the newest lines last", async () => {
    const dir = await fresh();
    const file = path.join(dir, "server.log");
    const sink = createRotatingFile({ file, maxBytes: 1024, keep: 2 });
    for (let index = 0; index < 200; index += 1)
      sink.write(`line ${String(index).padStart(4, "0")} ${"x".repeat(40)}\n`);
    sink.close();
    expect((await readdir(dir)).sort()).toEqual(["server.log", "server.log.1", "server.log.2"]);
    const lines = await allLines(file, 2);
    expect(lines.at(-1)).toMatch(/^line 0199 /);
    expect(lines.length).toBeLessThan(200);
  });

  it("continues an existing file, tightens its mode, and refuses a symbolic link", async () => {
    const dir = await fresh();
    const file = path.join(dir, "server.log");
    await writeFile(file, "earlier\n", { mode: 0o644 });
    const sink = createRotatingFile({ file, maxBytes: 4096, keep: 1 });
    sink.write("later\n");
    sink.close();
    expect(await readFile(file, "utf8")).toBe("earlier\nlater\n");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const link = path.join(dir, "link.log");
    await symlink(file, link);
    expect(() => createRotatingFile({ file: link, maxBytes: 4096, keep: 1 })).toThrow(/ELOOP/);
  });
});
