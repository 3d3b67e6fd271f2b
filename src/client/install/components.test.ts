// The component manifest's schema: exact pins only, a reason for every unpinned entry and every platform left out.
import { describe, expect, it } from "vitest";
import { COMPILED_CATALOGUE } from "./catalogue.js";
import { COMPONENT_MANIFEST, componentSchema, unsupportedReason } from "./components.js";

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
