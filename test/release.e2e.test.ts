// `npm run release` end to end (without installing: test/install.e2e.test.ts does that): the tarball and the skill
// bundle beside it, both in SHA256SUMS, and the bundle's SKILL.md is the file skills/get serves, digest and all.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readZip } from "../scripts/zip.test-kit.js";
import { servedSkill } from "../src/server/web-mcp/skills.test-kit.js";
import { tempDir } from "./helpers.js";

const run = promisify(execFile);
const REPO = path.resolve(".");

describe("npm run release", () => {
  let work: Awaited<ReturnType<typeof tempDir>>;
  let out: string;
  let stdout: string;

  beforeAll(async () => {
    work = await tempDir("ivoai-release-");
    out = path.join(work.dir, "release");
    ({ stdout } = await run(process.execPath, ["scripts/release.mjs", "--out", out], {
      cwd: REPO,
      timeout: 300_000,
    }));
  });
  afterAll(() => work.cleanup());

  it("writes ivoai-memory-context.zip beside the tarball, both checked by sha256sum -c", async () => {
    const { version } = JSON.parse(await readFile(path.join(REPO, "package.json"), "utf8")) as {
      version: string;
    };
    const sums = await readFile(path.join(out, "SHA256SUMS"), "utf8");
    expect(stdout).toBe(
      `${path.join(out, `ivoai-${version}.tgz`)}\n${path.join(out, "ivoai-memory-context.zip")}\n${sums}`,
    );
    const checked = await run("sha256sum", ["-c", "SHA256SUMS"], { cwd: out });
    expect(checked.stdout).toBe(`ivoai-${version}.tgz: OK\nivoai-memory-context.zip: OK\n`);
  });

  it("the zip is the skills/ folder, and its SKILL.md has the digest skills/get serves", async () => {
    const entries = readZip(await readFile(path.join(out, "ivoai-memory-context.zip")));
    expect(entries.map((entry) => entry.name)).toEqual([
      "ivoai-memory-context/",
      "ivoai-memory-context/SKILL.md",
    ]);
    const skillMd = entries[1]?.data ?? Buffer.alloc(0);
    expect(
      skillMd.equals(await readFile(path.join(REPO, "skills", "ivoai-memory-context", "SKILL.md"))),
    ).toBe(true);
    const served = await servedSkill();
    expect(`sha256:${createHash("sha256").update(skillMd).digest("hex")}`).toBe(served.digest);
  });
});
