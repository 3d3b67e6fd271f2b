import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "../../shared/tokens.js";
import { LEGACY_GRANT_TTL_MS, openOAuthStore } from "./store.js";

describe("OAuth store grants", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-oauth-store-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("upgrades a store from before grants: refresh families get a grant with the default lifetime", () => {
    const file = path.join(dir, "oauth.sqlite");
    const old = new Database(file);
    old.exec(`
      CREATE TABLE clients (client_id TEXT PRIMARY KEY, client_name TEXT, redirect_uris TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE tokens (token_sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, family TEXT NOT NULL, client_id TEXT NOT NULL,
        scopes TEXT NOT NULL, resource TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT, used_at TEXT, code_sha256 TEXT);
      INSERT INTO clients VALUES ('oc_old', 'Old', '["http://127.0.0.1/cb"]', '2026-01-01T00:00:00.000Z');
      INSERT INTO tokens VALUES ('${sha256Hex("ivoai_rt_old")}', 'refresh', 'fam_old', 'oc_old', '["context:read"]',
        'http://127.0.0.1:1/mcp', '2099-01-01T00:00:00.000Z', NULL, NULL, NULL);
    `);
    old.close();
    const before = Date.now();
    const store = openOAuthStore(file);
    try {
      expect(store.getClient("oc_old")?.client_name).toBe("Old");
      const [client] = store.listClients();
      expect(client).toMatchObject({ client_id: "oc_old", revoked_at: null });
      const grant = client?.grants[0];
      expect(grant).toMatchObject({ id: "fam_old", scopes: ["context:read"], revoked_at: null });
      const lifetime = Date.parse(grant?.expires_at ?? "") - before;
      expect(lifetime).toBeGreaterThanOrEqual(LEGACY_GRANT_TTL_MS);
      expect(lifetime).toBeLessThan(LEGACY_GRANT_TTL_MS + 60_000);
      // The token now ends with its grant, not in 2099.
      expect(store.getToken("ivoai_rt_old")?.expires_at).toBe(grant?.expires_at);
    } finally {
      store.close();
    }
  });

  it("ends a token with its client or grant, and hides a revoked client from the flows", () => {
    const store = openOAuthStore(path.join(dir, "oauth.sqlite"));
    try {
      const at = new Date().toISOString();
      const later = new Date(Date.now() + 3_600_000).toISOString();
      store.addClient({
        client_id: "oc_a",
        client_name: null,
        redirect_uris: ["http://127.0.0.1/cb"],
        created_at: at,
      });
      store.addGrant({
        id: "fam_a",
        client_id: "oc_a",
        scopes: ["context:read"],
        resource: "r",
        created_at: at,
        expires_at: later,
        revoked_at: null,
      });
      store.addToken({
        token_sha256: sha256Hex("ivoai_at_a"),
        kind: "access",
        family: "fam_a",
        client_id: "oc_a",
        scopes: ["context:read"],
        resource: "r",
        expires_at: later,
        revoked_at: null,
        used_at: null,
        code_sha256: null,
      });
      expect(store.getToken("ivoai_at_a")?.revoked_at).toBeNull();
      expect(store.revokeClient("oc_a", at)?.grants[0]?.revoked_at).toBe(at);
      expect(store.getToken("ivoai_at_a")?.revoked_at).toBe(at);
      expect(store.getClient("oc_a")).toBeUndefined();
      expect(store.revokeClient("oc_missing", at)).toBeUndefined();
      expect(store.revokeGrant("fam_missing", at)).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it("forgets clients that never completed an authorization within a day, and keeps the others", () => {
    const store = openOAuthStore(path.join(dir, "oauth.sqlite"));
    try {
      const at = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString();
      const registered = at(-25);
      const client = (id: string) =>
        store.addClient({
          client_id: id,
          client_name: id,
          redirect_uris: ["http://127.0.0.1/cb"],
          created_at: registered,
        });
      for (const id of ["oc_idle", "oc_granted", "oc_consenting", "oc_fresh"]) client(id);
      store.addGrant({
        id: "fam_1",
        client_id: "oc_granted",
        scopes: ["context:read"],
        resource: "http://127.0.0.1:1/mcp",
        created_at: registered,
        expires_at: "2027-01-01T00:00:00.000Z",
        revoked_at: null,
      });
      store.addPending({
        id: "par_1",
        client_id: "oc_consenting",
        redirect_uri: "http://127.0.0.1/cb",
        code_challenge: "x",
        resource: "http://127.0.0.1:1/mcp",
        scopes: ["context:read"],
        state: null,
        csrf_sha256: "y",
        expires_at: at(0.2),
      });
      store.prune(at(-2));
      expect(store.listClients().map((entry) => entry.client_id)).toHaveLength(4);
      store.prune(at(0));
      expect(
        store
          .listClients()
          .map((entry) => entry.client_id)
          .sort(),
      ).toEqual(["oc_consenting", "oc_granted"].sort());
    } finally {
      store.close();
    }
  });
});
