import { describe, expect, it } from "vitest";
import type { ModelProfile } from "./contracts.js";
import {
  claudeProfiles,
  codexProfiles,
  modelClass,
  profileId,
  profileTier,
  smallestSufficient,
} from "./registry.js";

const models = [
  {
    model: "gpt-6.2-sol",
    displayName: "",
    isDefault: true,
    efforts: ["low", "medium", "high", "xhigh", "max", "ultra"],
    defaultEffort: "low",
  },
  {
    model: "gpt-6.2-astra",
    displayName: "",
    isDefault: false,
    efforts: ["low", "medium", "high"],
    defaultEffort: "low",
  },
  {
    model: "gpt-6-luna",
    displayName: "",
    isDefault: false,
    efforts: ["low", "medium", "high"],
    defaultEffort: "medium",
  },
  { model: "gpt-5.6-luna", displayName: "", isDefault: false, efforts: ["low"], defaultEffort: "medium" },
];

describe("the tier rule", () => {
  it("classes models by name: light, standard, strongest", () => {
    expect(modelClass("gpt-6-luna")).toBe(1);
    expect(modelClass("gpt-5-mini")).toBe(1);
    expect(modelClass("haiku")).toBe(1);
    expect(modelClass("gpt-6.2-sol")).toBe(2);
    expect(modelClass("gpt-5.5")).toBe(2);
    expect(modelClass("sonnet")).toBe(2);
    expect(modelClass("gpt-6.2-astra")).toBe(3);
    expect(modelClass("gpt-5-pro")).toBe(3);
    expect(modelClass("opus")).toBe(3);
    expect(modelClass("gpt-prolific")).toBe(2);
  });

  it("shifts by effort and clamps; max/ultra are left out", () => {
    expect(profileTier("gpt-6.2-sol", "low")).toBe(1);
    expect(profileTier("gpt-6.2-sol", "medium")).toBe(2);
    expect(profileTier("gpt-6.2-sol", "xhigh")).toBe(3);
    expect(profileTier("gpt-6-luna", "low")).toBe(1);
    expect(profileTier("gpt-6.2-astra", "high")).toBe(3);
    expect(profileTier("gpt-6.2-sol", "max")).toBeNull();
    expect(profileTier("gpt-6.2-sol", "ultra")).toBeNull();
  });
});

describe("profiles", () => {
  it("have opaque stable ids", () => {
    expect(profileId("codex", "gpt-6.2-sol", "low")).toMatch(/^mdl_[0-9a-f]{8}$/);
    expect(profileId("codex", "gpt-6.2-sol", "low")).toBe(profileId("codex", "gpt-6.2-sol", "low"));
    expect(profileId("codex", "gpt-6.2-sol", "low")).not.toBe(profileId("claude", "gpt-6.2-sol", "low"));
  });

  it("codex: every model × catalogue effort, verified as told", () => {
    const profiles = codexProfiles(models, true);
    expect(profiles.filter((entry) => entry.model === "gpt-6.2-sol").map((entry) => entry.effort)).toEqual([
      "low",
      "medium",
      "high",
      "xhigh",
    ]);
    expect(profiles.every((entry) => entry.verified && entry.contextWindow > 0)).toBe(true);
    expect(codexProfiles(models, false).some((entry) => entry.verified)).toBe(false);
  });

  it("claude: haiku, sonnet and opus with efforts", () => {
    const profiles = claudeProfiles(true);
    expect([...new Set(profiles.map((entry) => entry.model))]).toEqual(["haiku", "sonnet", "opus"]);
    expect(profiles.find((entry) => entry.model === "opus" && entry.effort === "high")?.tier).toBe(3);
    expect(profiles.find((entry) => entry.model === "haiku" && entry.effort === "low")?.tier).toBe(1);
  });
});

describe("smallestSufficient", () => {
  const profiles = codexProfiles(models, true);
  it("picks the lowest sufficient tier, then the lower effort, then the lighter and newer model", () => {
    expect(smallestSufficient(profiles, 1, "codex")).toMatchObject({
      model: "gpt-6-luna",
      effort: "low",
      tier: 1,
    });
    expect(smallestSufficient(profiles, 2, "codex")).toMatchObject({
      model: "gpt-6.2-astra",
      effort: "low",
      tier: 2,
    });
    expect(smallestSufficient(profiles, 3, "codex")).toMatchObject({
      model: "gpt-6.2-astra",
      effort: "medium",
    });
  });

  it("never picks an unverified profile or another executor's", () => {
    const unverified: ModelProfile[] = profiles.map((entry) => ({ ...entry, verified: entry.tier !== 3 }));
    expect(smallestSufficient(unverified, 3, "codex")).toBeNull();
    expect(smallestSufficient(profiles, 1, "claude")).toBeNull();
    expect(smallestSufficient([...profiles, ...claudeProfiles(true)], 3, "claude")).toMatchObject({
      model: "opus",
      effort: "medium",
    });
  });
});
