import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AGENTS,
  CATALOGUE_OVERRIDE_ENV,
  CATALOGUE_UNSAFE_ENV,
  COMPILED_CATALOGUE,
  catalogueSchema,
  loadCatalogue,
} from "./catalogue.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-catalogue-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const entry = {
  agent: "codex",
  package: "@openai/codex",
  version: "0.171.0",
  integrity: COMPILED_CATALOGUE.agents[0]?.integrity,
  bins: ["codex"],
  allow_scripts: false,
  scripts_note: "",
};

describe("install catalogue", () => {
  it("pins every agent at an exact version", () => {
    expect(catalogueSchema.parse(COMPILED_CATALOGUE)).toEqual(COMPILED_CATALOGUE);
    expect(COMPILED_CATALOGUE.agents.map((item) => item.agent)).toEqual([...AGENTS]);
  });

  it("never accepts latest or a range, even from the test/dev override", async () => {
    for (const version of ["latest", "^0.171.0", "0.171", "*"]) {
      const file = path.join(dir, "c.json");
      await writeFile(file, JSON.stringify({ revision: 1, agents: [{ ...entry, version }] }));
      expect(() => loadCatalogue({ [CATALOGUE_OVERRIDE_ENV]: file, [CATALOGUE_UNSAFE_ENV]: "1" })).toThrow(
        /exact version/,
      );
    }
  });

  it("uses the compiled catalogue unless the override names an absolute file", () => {
    expect(loadCatalogue({})).toBe(COMPILED_CATALOGUE);
    expect(() =>
      loadCatalogue({ [CATALOGUE_OVERRIDE_ENV]: "relative.json", [CATALOGUE_UNSAFE_ENV]: "1" }),
    ).toThrow(/absolute/);
  });

  it("refuses the override alone and warns every time it is honoured", async () => {
    const file = path.join(dir, "c.json");
    await writeFile(file, JSON.stringify({ revision: 7, agents: [entry] }));
    for (const unsafe of [undefined, "", "0", "yes"])
      expect(() =>
        loadCatalogue({
          [CATALOGUE_OVERRIDE_ENV]: file,
          ...(unsafe === undefined ? {} : { [CATALOGUE_UNSAFE_ENV]: unsafe }),
        }),
      ).toThrow(/IVOAI_INSTALL_CATALOGUE is a test seam and is refused unless IVOAI_UNSAFE_TEST_CATALOGUE=1/);
    const warnings: string[] = [];
    const loaded = loadCatalogue({ [CATALOGUE_OVERRIDE_ENV]: file, [CATALOGUE_UNSAFE_ENV]: "1" }, (text) =>
      warnings.push(text),
    );
    expect(loaded.revision).toBe(7);
    expect(warnings).toEqual([
      expect.stringContaining(`IVOAI_INSTALL_CATALOGUE=${file} replaces the reviewed`),
    ]);
  });
});
