// The component manifest's schema: exact pins only, a reason for every unpinned entry and every platform left out;
// setup refuses a platform the manifest rules out.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { clientPaths } from "../../config/client-paths.js";
import { COMPILED_CATALOGUE } from "./catalogue.js";
import { COMPONENT_MANIFEST, componentSchema, unsupportedReason } from "./components.js";
import { setup } from "./lifecycle.js";

const managed = {
  name: "x",
  kind: "agent",
  package: "x",
  version: "1.2.3",
  integrity: `sha512-${"A".repeat(86)}==`,
  method: "npm",
  purpose: "p",
  platforms: "any",
};

describe("manifest/components.json", () => {
  it("refuses latest or a range, a malformed integrity, and an unpinned entry without its reason", () => {
    expect(componentSchema.safeParse(managed).success).toBe(true);
    expect(componentSchema.safeParse({ ...managed, version: "latest" }).success).toBe(false);
    expect(componentSchema.safeParse({ ...managed, version: "^1.2.3" }).success).toBe(false);
    expect(componentSchema.safeParse({ ...managed, integrity: "sha1-abc" }).success).toBe(false);
    expect(componentSchema.safeParse({ ...managed, integrity: null }).success).toBe(false);
    const external = { ...managed, method: "external", version: null, integrity: null };
    expect(componentSchema.safeParse(external).success).toBe(false);
    expect(componentSchema.safeParse({ ...external, note: "the user installs it" }).success).toBe(true);
  });

  it("is the one source of the agents' pins, and lists Ruflo 3.38.12 and the seed's optional components", () => {
    const names = COMPONENT_MANIFEST.components.map((entry) => entry.name);
    expect(names).toEqual([
      "codex",
      "claude",
      "opencode",
      "ruflo",
      "native-sqlite",
      "headroom",
      "caveman",
      "tei",
    ]);
    expect(COMPILED_CATALOGUE.agents.map((agent) => `${agent.package}@${agent.version}`)).toEqual(
      COMPONENT_MANIFEST.components
        .filter((entry) => entry.kind === "agent")
        .map((entry) => `${entry.package}@${entry.version}`),
    );
    expect(COMPONENT_MANIFEST.components.find((entry) => entry.name === "ruflo")?.version).toBe("3.38.12");
  });

  it("says why a component cannot be installed on a platform", () => {
    const ruflo = COMPONENT_MANIFEST.components.find((entry) => entry.name === "ruflo");
    if (!ruflo) throw new Error("ruflo is not in the manifest");
    expect(unsupportedReason(ruflo, "linux-arm64")).toMatch(/not reviewed on linux-arm64/);
    expect(unsupportedReason(ruflo, "linux-x64")).toBeNull();
    expect(unsupportedReason(ruflo, "win32-x64")).toMatch(/no reviewed build for win32-x64/);
  });
});

describe("setup on a platform the manifest rules out", () => {
  it("refuses before anything is installed, naming each component and why", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "ivoai-platform-"));
    try {
      const deps = {
        paths: clientPaths({ HOME: home }),
        catalogue: COMPILED_CATALOGUE,
        env: { HOME: home, PATH: "" },
        progress: () => undefined,
        platform: "linux-arm64",
      };
      await expect(setup(deps, ["codex"], ["ruflo"])).rejects.toThrow(
        "cannot install on linux-arm64: ruflo: not reviewed on linux-arm64: its optional native dependencies " +
          "were not checked there; nothing was installed (ivoai components lists why)",
      );
      await expect(setup({ ...deps, platform: "win32-x64" }, ["codex"])).rejects.toThrow(
        /cannot install on win32-x64: codex: no reviewed build for win32-x64/,
      );
      expect(await readdir(home)).toEqual([]);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
