import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SKILL_FILES, SKILL_NAME } from "../src/protocol/skill-bundle.js";
import { servedSkill } from "../src/server/web-mcp/skills.test-kit.js";
// @ts-expect-error: a plain ES module script without types (run by `npm run skills` and `npm run release`).
import { skillZip, staleSkillFiles, writeSkillDir } from "./skills.mjs";
import { readZip } from "./zip.test-kit.js";

const REPO = path.resolve(import.meta.dirname, "..");

describe("skills/ivoai-memory-context", () => {
  it("is what the code writes (run `npm run skills` after changing the knowledge policy)", async () => {
    for (const file of SKILL_FILES) {
      const committed = await readFile(path.join(REPO, "skills", SKILL_NAME, file.path), "utf8");
      expect(committed, `skills/${SKILL_NAME}/${file.path} is stale: run npm run skills`).toBe(file.content);
    }
    expect(await staleSkillFiles(REPO)).toEqual([]);
  });

  it("the release's zip holds the folder whose SKILL.md has the digest skills/get serves", async () => {
    const zip = await skillZip(REPO);
    expect(zip.name).toBe("ivoai-memory-context.zip");
    const entries = readZip(zip.data);
    expect(entries.map((e) => e.name)).toEqual([
      `${SKILL_NAME}/`,
      ...SKILL_FILES.map((f) => `${SKILL_NAME}/${f.path}`).sort(),
    ]);
    const skillMd = entries.find((e) => e.name === `${SKILL_NAME}/SKILL.md`);
    const served = await servedSkill();
    expect(
      `sha256:${createHash("sha256")
        .update(skillMd?.data ?? "")
        .digest("hex")}`,
    ).toBe(served.digest);
    expect(skillMd?.data.toString("utf8")).toBe(served.content);
    expect(served.resources.map((r) => r.digest)).toContain(served.digest);
    // Deterministic: a second zip of the same directory is the same bytes.
    expect((await skillZip(REPO)).data.equals(zip.data)).toBe(true);
  });

  describe("in a copy of the repository", () => {
    let root: string;
    beforeAll(async () => {
      root = await mkdtemp(path.join(tmpdir(), "ivoai-skills-"));
      await cp(path.join(REPO, "src", "protocol"), path.join(root, "src", "protocol"), { recursive: true });
      await cp(path.join(REPO, "src", "shared"), path.join(root, "src", "shared"), { recursive: true });
      await cp(path.join(REPO, "skills"), path.join(root, "skills"), { recursive: true });
    });
    afterAll(() => rm(root, { recursive: true, force: true }));

    it("a stale, extra or missing file stops the zip, and `npm run skills` puts the directory right", async () => {
      const dir = path.join(root, "skills", SKILL_NAME);
      await writeFile(path.join(dir, "SKILL.md"), "edited by hand\n");
      await writeFile(path.join(dir, "notes.md"), "not from the code\n");
      expect(await staleSkillFiles(root)).toEqual(["SKILL.md", "notes.md"]);
      await expect(skillZip(root)).rejects.toThrow(
        /skills\/ is out of date \(SKILL\.md, notes\.md\): run npm run skills/,
      );
      await writeSkillDir(root);
      expect(await staleSkillFiles(root)).toEqual([]);
      expect((await skillZip(root)).data.equals((await skillZip(REPO)).data)).toBe(true);
      await rm(path.join(dir, "SKILL.md"));
      expect(await staleSkillFiles(root)).toEqual(["SKILL.md"]);
    });
  });
});
