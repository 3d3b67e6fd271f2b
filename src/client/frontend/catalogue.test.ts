import { describe, expect, it } from "vitest";
import type { ExecutorInfo, ExecutorRegistry } from "../auto/registry.js";
import { claudeProfiles, codexProfiles, profileId } from "../auto/registry.js";
import {
  AUTO_MODEL_ID,
  effortAllowed,
  frontendCatalogue,
  KNOWN_EFFORTS,
  opencodeProviderConfig,
  resolveSelection,
  validEfforts,
} from "./catalogue.js";

const codexModels = [
  {
    model: "gpt-6.2-sol",
    displayName: "",
    isDefault: true,
    efforts: ["high", "low", "max"],
    defaultEffort: "low",
  },
  {
    model: "gpt-6-luna",
    displayName: "",
    isDefault: false,
    efforts: ["medium", "low"],
    defaultEffort: "low",
  },
];

function info(name: "codex" | "claude", overrides: Partial<ExecutorInfo> = {}): ExecutorInfo {
  return {
    name,
    path: `/bin/${name}`,
    version: "1",
    login: "logged_in",
    login_detail: "",
    catalogue: name === "codex" ? "model/list" : "static",
    profiles: name === "codex" ? codexProfiles(codexModels, true) : claudeProfiles(true),
    problems: [],
    ...overrides,
  };
}
const registry = (...executors: ExecutorInfo[]): ExecutorRegistry => ({
  checked_at: "2026-11-30T00:00:00Z",
  executors,
});

describe("frontendCatalogue", () => {
  it("lists auto first, then verified profiles by executor, model order and effort, with readable names", () => {
    const entries = frontendCatalogue(registry(info("claude"), info("codex")));
    expect(entries[0]).toEqual({
      id: "auto",
      name: "ivoai auto (scheduler decides)",
      selection: { kind: "auto" },
    });
    expect(entries.slice(1, 5).map((entry) => entry.name)).toEqual([
      "codex · gpt-6.2-sol · low",
      "codex · gpt-6.2-sol · high",
      "codex · gpt-6-luna · low",
      "codex · gpt-6-luna · medium",
    ]);
    expect(entries[5]?.name).toBe("claude · haiku · low");
    expect(entries).toHaveLength(1 + 4 + 12);
    const high = entries[2];
    expect(high?.id).toBe(profileId("codex", "gpt-6.2-sol", "high"));
    expect(high?.selection).toEqual({
      kind: "explicit",
      id: high?.id,
      executor: "codex",
      model: "gpt-6.2-sol",
      effort: "high",
    });
    expect(frontendCatalogue(registry(info("codex"), info("claude")))).toEqual(entries);
  });

  it("leaves out unverified profiles and executors that are missing or logged out", () => {
    const entries = frontendCatalogue(
      registry(info("codex", { login: "logged_out" }), info("claude", { profiles: claudeProfiles(false) })),
    );
    expect(entries.map((entry) => entry.id)).toEqual([AUTO_MODEL_ID]);
    const missing = frontendCatalogue(registry(info("codex", { path: null }), info("claude")));
    expect(missing.some((entry) => entry.name.startsWith("codex"))).toBe(false);
    expect(missing.some((entry) => entry.name.startsWith("claude"))).toBe(true);
  });
});

describe("resolveSelection", () => {
  const id = profileId("codex", "gpt-6.2-sol", "high");

  it("resolves auto and a listed entry", () => {
    expect(resolveSelection("auto", registry(info("codex")))).toEqual({
      ok: true,
      selection: { kind: "auto" },
    });
    expect(resolveSelection(id, registry(info("codex")))).toEqual({
      ok: true,
      selection: { kind: "explicit", id, executor: "codex", model: "gpt-6.2-sol", effort: "high" },
    });
  });

  it("fails closed, naming the model, when its executor is logged out, missing or the profile unverified", () => {
    for (const [executor, why] of [
      [info("codex", { login: "logged_out" }), "codex is not logged in"],
      [info("codex", { path: null }), "codex is not installed"],
      [info("codex", { profiles: codexProfiles(codexModels, false) }), "did not confirm"],
    ] as const) {
      const result = resolveSelection(id, registry(executor, info("claude")));
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error).toContain("codex · gpt-6.2-sol · high");
      expect(result.error).toContain(why);
    }
  });

  it("refuses an unknown id without echoing control characters", () => {
    const result = resolveSelection("mdl_deadbeef\n\u001b[2J", registry(info("codex"), info("claude")));
    expect(result).toEqual({ ok: false, error: expect.stringContaining('"mdl_deadbeef??[2J" is not in') });
    // A model the registry dropped (max effort is never catalogued) is unknown too.
    expect(resolveSelection(profileId("codex", "gpt-6.2-sol", "max"), registry(info("codex"))).ok).toBe(
      false,
    );
  });
});

describe("efforts", () => {
  it("unions the catalogue's efforts, cheapest first", () => {
    expect(validEfforts(registry(info("codex")))).toEqual(["low", "medium", "high"]);
    expect(validEfforts(registry(info("codex"), info("claude")))).toEqual(["low", "medium", "high", "xhigh"]);
    expect(validEfforts(registry(info("codex", { login: "logged_out" })))).toEqual([]);
  });

  it("knows every effort the registry can put in a profile", () => {
    const all = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"];
    const profiles = codexProfiles(
      [{ model: "m", displayName: "", isDefault: true, efforts: all, defaultEffort: "low" }],
      true,
    );
    expect(profiles.map((profile) => profile.effort)).toEqual([...KNOWN_EFFORTS]);
  });

  it("lets an explicit entry take only its own effort, and auto any known effort", () => {
    const explicit = {
      kind: "explicit",
      id: "mdl_1",
      executor: "codex",
      model: "m",
      effort: "high",
    } as const;
    expect(effortAllowed(explicit, null)).toBe(true);
    expect(effortAllowed(explicit, "high")).toBe(true);
    expect(effortAllowed(explicit, "low")).toBe(false);
    expect(effortAllowed({ kind: "auto" }, null)).toBe(true);
    expect(effortAllowed({ kind: "auto" }, "xhigh")).toBe(true);
    expect(effortAllowed({ kind: "auto" }, "ultra")).toBe(false);
    expect(effortAllowed({ kind: "auto" }, "xhigh", ["low"])).toBe(false);
  });
});

describe("opencodeProviderConfig", () => {
  const entries = frontendCatalogue(registry(info("codex")));

  it("references the secret by variable name and gives auto one variant per catalogue effort", () => {
    const config = opencodeProviderConfig(entries, "http://127.0.0.1:4321/v1/", "IVOAI_BRIDGE_SECRET");
    expect(config.options).toEqual({
      baseURL: "http://127.0.0.1:4321/v1",
      apiKey: "{env:IVOAI_BRIDGE_SECRET}",
    });
    expect(Object.keys(config.models)).toEqual(entries.map((entry) => entry.id));
    expect(config.models.auto?.variants).toEqual({
      low: { reasoningEffort: "low" },
      medium: { reasoningEffort: "medium" },
      high: { reasoningEffort: "high" },
    });
    expect(config.models[profileId("codex", "gpt-6-luna", "low")]).toEqual({
      name: "codex · gpt-6-luna · low",
    });
  });

  it("refuses a non-loopback or credentialed URL and a bad variable name", () => {
    expect(() => opencodeProviderConfig(entries, "http://example.com/v1", "S")).toThrow(/loopback/);
    expect(() => opencodeProviderConfig(entries, "http://u:p@127.0.0.1:1/v1", "S")).toThrow(/credentials/);
    expect(() => opencodeProviderConfig(entries, "http://127.0.0.1:1/v1", "x}{env:HOME")).toThrow(/variable/);
  });
});
