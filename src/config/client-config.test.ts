import { describe, expect, it } from "vitest";
import { parseClientConfig, renderClientConfig } from "./client-config.js";
import { LEGACY_SERVER_ID, migrateSecretsDown, migrateSecretsUp, parseSecrets } from "./secrets.js";

describe("client configuration", () => {
  it("normalises the legacy single-server layout to the profile 'default'", () => {
    const doc = parseClientConfig('[server]\nurl = "https://ai.example.com"\n', "config.toml");
    expect(doc.migrated).toBe(true);
    expect(doc.profiles).toEqual([
      expect.objectContaining({
        id: LEGACY_SERVER_ID,
        alias: "default",
        purpose: "default",
        url: "https://ai.example.com",
      }),
    ]);
  });

  it("drops the legacy [server] table with the legacy profile, so a removed profile stays removed", () => {
    const doc = parseClientConfig('[server]\nurl = "https://ai.example.com"\n[ui]\ntheme = "x"\n', "c.toml");
    const kept = parseClientConfig(renderClientConfig(doc, doc.profiles), "c.toml");
    expect(kept.profiles.map((profile) => profile.id)).toEqual([LEGACY_SERVER_ID]);
    const removed = parseClientConfig(renderClientConfig(doc, []), "c.toml");
    expect(removed.profiles).toEqual([]);
    expect(removed.raw.server).toBeUndefined();
    expect(removed.raw.ui).toEqual({ theme: "x" });
  });

  it("keeps unknown fields, top-level and inside profiles, when it rewrites", () => {
    const text =
      'editor = "vim"\n[servers.srv_1]\nalias = "a"\nurl = "https://a.example"\npurpose = "p"\nnote = "keep me"\n';
    const doc = parseClientConfig(text, "config.toml");
    const profiles = doc.profiles.map((profile) => ({ ...profile, enabled: false }));
    const again = parseClientConfig(renderClientConfig(doc, profiles), "config.toml");
    expect(again.raw.editor).toBe("vim");
    expect((again.raw.servers as Record<string, Record<string, unknown>>).srv_1?.note).toBe("keep me");
    expect(again.profiles[0]?.enabled).toBe(false);
    expect(() => parseClientConfig("[servers.x]\nalias = 3\n", "config.toml")).toThrow(/servers\.x/);
  });

  it("migrates secrets 1 → 2 and back without losing the credential", () => {
    const v1 = { server: { credential: "ivoai_cred_legacy" } };
    const { secrets, migrated } = parseSecrets(v1);
    expect(migrated).toBe(true);
    expect(secrets).toEqual(migrateSecretsUp(v1));
    expect(secrets.servers[LEGACY_SERVER_ID]?.credential).toBe("ivoai_cred_legacy");
    expect(migrateSecretsDown(secrets)).toEqual({ schema: 1, server: { credential: "ivoai_cred_legacy" } });
    expect(parseSecrets({ schema: 2, servers: {} }).migrated).toBe(false);
    expect(() => parseSecrets({ schema: 3 })).toThrow(/neither schema/);
  });
});
