// The order of the secrets.json writes around config.toml: no listed profile ever lacks its credential.
import { describe, expect, it } from "vitest";
import { LEGACY_SERVER_ID, type SecretsV2 } from "../../config/secrets.js";
import { planSecretWrites } from "./secrets-plan.js";

const cred = (credential: string) => ({ credential });

describe("planSecretWrites", () => {
  it("adds a credential in the interim write, before config.toml lists its profile", () => {
    const old: SecretsV2 = { schema: 2, servers: { a: cred("A") } };
    const next: SecretsV2 = { schema: 2, servers: { a: cred("A"), b: cred("B") } };
    const { interim, final } = planSecretWrites({ before: ["a"], after: ["a", "b"] }, old, next);
    expect(interim).toEqual(next);
    expect(final).toEqual(next);
  });

  it("keeps a removed profile's credential until config.toml no longer lists it, then drops it", () => {
    const old: SecretsV2 = { schema: 2, servers: { a: cred("A"), b: cred("B") } };
    const next: SecretsV2 = { schema: 2, servers: { a: cred("A") } };
    const { interim, final } = planSecretWrites({ before: ["a", "b"], after: ["a"] }, old, next);
    expect(interim).toEqual(old);
    expect(final).toEqual(next);
  });

  it("drops the legacy mirror with the legacy profile, and credentials no profile uses", () => {
    const old: SecretsV2 = {
      schema: 2,
      servers: { [LEGACY_SERVER_ID]: cred("L"), orphan: cred("O") },
      server: cred("L"),
    };
    const { interim, final } = planSecretWrites({ before: [LEGACY_SERVER_ID], after: [] }, old, {
      schema: 2,
      servers: {},
      server: cred("L"),
    });
    expect(interim).toEqual({ schema: 2, servers: { [LEGACY_SERVER_ID]: cred("L") }, server: cred("L") });
    expect(final).toEqual({ schema: 2, servers: {} });
  });

  it("keeps the legacy mirror while the legacy profile stays", () => {
    const old: SecretsV2 = { schema: 2, servers: { [LEGACY_SERVER_ID]: cred("L") }, server: cred("L") };
    const ids = { before: [LEGACY_SERVER_ID], after: [LEGACY_SERVER_ID] };
    expect(planSecretWrites(ids, old, structuredClone(old)).final).toEqual(old);
  });

  it("moves a user MCP server's secrets the same way: added before, dropped after config.toml", () => {
    const docs = { headers: { Authorization: "H" }, env: {} };
    const old: SecretsV2 = { schema: 2, servers: {}, mcp_servers: { docs } };
    const next: SecretsV2 = { schema: 2, servers: {}, mcp_servers: {} };
    const { interim, final } = planSecretWrites(
      { before: [], after: [], userBefore: ["docs"], userAfter: [] },
      old,
      next,
    );
    expect(interim.mcp_servers).toEqual({ docs });
    expect(final.mcp_servers).toBeUndefined();
  });
});
