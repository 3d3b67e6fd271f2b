// The OAuth store's contract, asserted once and run on SQLite and on PostgreSQL: single-use codes under concurrency,
// refresh rotation with family revocation on reuse, revocations seen at once by other connections (replicas), expiry,
// the DCR client lifecycle and pruning; plus the adoption of unversioned SQLite files.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isIvoaiError } from "../../shared/errors.js";
import { sha256Hex } from "../../shared/tokens.js";
import { type BackendKit, describeBackends } from "../store/backends.test-kit.js";
import { openSqliteSql } from "../store/sqlite.js";
import {
  type AuthorizationCode,
  type Grant,
  LEGACY_GRANT_TTL_MS,
  type OAuthStore,
  openOAuthStore,
  type TokenRecord,
} from "./store.js";

const HOUR = 3_600_000;
const at = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();
const REDIRECT = "http://127.0.0.1/cb";

const grantOf = (id: string, clientId: string, overrides: Partial<Grant> = {}): Grant => ({
  id,
  client_id: clientId,
  scopes: ["context:read"],
  resource: "r",
  created_at: at(0),
  expires_at: at(1),
  revoked_at: null,
  ...overrides,
});

const tokenOf = (
  secret: string,
  kind: TokenRecord["kind"],
  family: string,
  clientId: string,
  overrides: Partial<TokenRecord> = {},
): TokenRecord => ({
  token_sha256: sha256Hex(secret),
  kind,
  family,
  client_id: clientId,
  scopes: ["context:read"],
  resource: "r",
  expires_at: at(1),
  revoked_at: null,
  used_at: null,
  code_sha256: null,
  ...overrides,
});

const codeOf = (secret: string, clientId: string, overrides: Partial<AuthorizationCode> = {}) => ({
  code_sha256: sha256Hex(secret),
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: "challenge",
  resource: "r",
  scopes: ["context:read"],
  expires_at: at(0.1),
  used_at: null,
  ...overrides,
});

const addClient = (store: OAuthStore, id: string, createdAt = at(0)) =>
  store.addClient({ client_id: id, client_name: id, redirect_uris: [REDIRECT], created_at: createdAt });

/** Stores opened on `count` separate connections (pools on PostgreSQL): replicas in one process. */
async function replicas(kit: BackendKit, count: number): Promise<OAuthStore[]> {
  const stores: OAuthStore[] = [];
  for (let i = 0; i < count; i++) stores.push(await openOAuthStore(await kit.open("ivoai_oauth")));
  return stores;
}

describeBackends("OAuth store", (kit) => {
  let stores: OAuthStore[] = [];
  let store: OAuthStore;
  beforeEach(async () => {
    stores = await replicas(kit, 3);
    store = stores[0] as OAuthStore;
  });
  afterEach(async () => {
    await Promise.all(stores.map((each) => each.close()));
  });
  const other = (index: 1 | 2) => stores[index] as OAuthStore;

  it("registers clients (DCR), lists them with their grants, and revokes a client with everything it holds", async () => {
    await addClient(store, "oc_life_b", "2026-01-01T00:00:00.000Z");
    await addClient(store, "oc_life_a", "2026-01-01T00:00:00.000Z");
    expect(await other(1).getClient("oc_life_a")).toEqual({
      client_id: "oc_life_a",
      client_name: "oc_life_a",
      redirect_uris: [REDIRECT],
      created_at: "2026-01-01T00:00:00.000Z",
    });
    await expect(addClient(store, "oc_life_a")).rejects.toThrow();
    await store.addGrant(grantOf("fam_life_old", "oc_life_a", { created_at: at(-1) }));
    await store.addGrant(grantOf("fam_life_new", "oc_life_a"));
    await store.addToken(tokenOf("ivoai_rt_life", "refresh", "fam_life_new", "oc_life_a"));
    const listed = (await other(2).listClients()).filter((client) => client.client_id.startsWith("oc_life"));
    expect(listed.map((client) => client.client_id)).toEqual(["oc_life_a", "oc_life_b"]);
    expect(listed[0]?.grants.map((grant) => grant.id)).toEqual(["fam_life_new", "fam_life_old"]);
    expect(listed[0]).toMatchObject({ revoked_at: null, redirect_uris: [REDIRECT] });
    const now = at(0);
    const revoked = await store.revokeClient("oc_life_a", now);
    expect(revoked?.revoked_at).toBe(now);
    expect(revoked?.grants.map((grant) => grant.revoked_at)).toEqual([now, now]);
    // Another replica sees it on its next read: no client, a revoked token.
    expect(await other(1).getClient("oc_life_a")).toBeUndefined();
    expect((await other(2).getToken("ivoai_rt_life"))?.revoked_at).toBe(now);
    // Revoking again keeps the first time; the list still shows the revoked client.
    expect((await other(1).revokeClient("oc_life_a", at(1)))?.revoked_at).toBe(now);
    const again = (await store.listClients()).find((client) => client.client_id === "oc_life_a");
    expect(again?.revoked_at).toBe(now);
    expect(await store.revokeClient("oc_missing", now)).toBeUndefined();
    expect(await store.revokeGrant("fam_missing", now)).toBeUndefined();
  });

  it("ends a token with its client or grant, and hides a revoked client from the flows", async () => {
    const now = at(0);
    await addClient(store, "oc_a");
    await store.addGrant(grantOf("fam_a", "oc_a"));
    await store.addToken(tokenOf("ivoai_at_a", "access", "fam_a", "oc_a"));
    expect((await store.getToken("ivoai_at_a"))?.revoked_at).toBeNull();
    expect((await store.revokeClient("oc_a", now))?.grants[0]?.revoked_at).toBe(now);
    expect((await store.getToken("ivoai_at_a"))?.revoked_at).toBe(now);
    expect(await store.getClient("oc_a")).toBeUndefined();
  });

  it("spends a code exactly once when 20 redemptions race from 3 connections, storing one grant", async () => {
    await addClient(store, "oc_code");
    await store.addCode(codeOf("ivoai_ac_race", "oc_code"));
    const now = at(0);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (stores[i % 3] as OAuthStore).redeemCode("ivoai_ac_race", now, {
          grant: grantOf(`fam_race_${i}`, "oc_code"),
          tokens: [
            tokenOf(`ivoai_at_race_${i}`, "access", `fam_race_${i}`, "oc_code"),
            tokenOf(`ivoai_rt_race_${i}`, "refresh", `fam_race_${i}`, "oc_code", {
              code_sha256: sha256Hex("ivoai_ac_race"),
            }),
          ],
        }),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    const client = (await other(1).listClients()).find((entry) => entry.client_id === "oc_code");
    expect(client?.grants.map((grant) => grant.id)).toEqual([`fam_race_${winner}`]);
    // The losers stored nothing; the code reads as spent everywhere.
    expect(await store.getToken(`ivoai_at_race_${(winner + 1) % 20}`)).toBeUndefined();
    expect((await other(2).peekCode("ivoai_ac_race"))?.used_at).toBe(now);
    expect(await other(2).peekCode("ivoai_ac_unknown")).toBeUndefined();
    // A replay revokes everything issued from the code.
    await other(1).revokeFromCode(sha256Hex("ivoai_ac_race"), now);
    expect((await store.getToken(`ivoai_at_race_${winner}`))?.revoked_at).toBe(now);
    expect((await store.getGrant(`fam_race_${winner}`))?.revoked_at).toBe(now);
  });

  it("consumes an activation code and takes a pending request exactly once under concurrency", async () => {
    const now = at(0);
    const id = await store.addActivationCode("ivoai_act_once", at(0.1), now);
    expect(id).toBe(`act_${sha256Hex("ivoai_act_once").slice(0, 12)}`);
    const consumed = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        (stores[i % 3] as OAuthStore).consumeActivationCode("ivoai_act_once", now),
      ),
    );
    expect(consumed.filter(Boolean)).toHaveLength(1);
    await addClient(store, "oc_pending");
    const pending = {
      id: "ar_once",
      client_id: "oc_pending",
      redirect_uri: REDIRECT,
      code_challenge: "x",
      resource: "r",
      scopes: ["context:read"],
      state: "st",
      csrf_sha256: "y",
      expires_at: at(0.1),
      failed_attempts: 2,
    };
    await store.addPending(pending);
    const taken = await Promise.all(
      Array.from({ length: 9 }, (_, i) => (stores[i % 3] as OAuthStore).takePending("ar_once", now)),
    );
    expect(taken.filter(Boolean)).toEqual([pending]);
  });

  it("rotates a refresh token once; its reuse revokes the whole family, seen by every connection", async () => {
    const now = at(0);
    await addClient(store, "oc_rot");
    await store.addGrant(grantOf("fam_rot", "oc_rot"));
    await store.addToken(tokenOf("ivoai_rt_rot_1", "refresh", "fam_rot", "oc_rot"));
    const next = (n: number) => [
      tokenOf(`ivoai_at_rot_${n}`, "access", "fam_rot", "oc_rot"),
      tokenOf(`ivoai_rt_rot_${n}`, "refresh", "fam_rot", "oc_rot"),
    ];
    expect(await other(1).rotateRefreshToken("ivoai_rt_rot_1", now, next(2))).toBe("rotated");
    expect((await store.getToken("ivoai_rt_rot_1"))?.used_at).toBe(now);
    expect((await store.getToken("ivoai_at_rot_2"))?.revoked_at).toBeNull();
    expect(
      (await store.listClients()).find((c) => c.client_id === "oc_rot")?.grants[0]?.last_refreshed_at,
    ).toBe(now);
    // The old token again (from another replica): a reuse. Everything of the family is revoked, nothing stored.
    expect(await other(2).rotateRefreshToken("ivoai_rt_rot_1", now, next(3))).toBe("reused");
    expect(await store.getToken("ivoai_at_rot_3")).toBeUndefined();
    for (const token of ["ivoai_rt_rot_2", "ivoai_at_rot_2"])
      expect((await other(1).getToken(token))?.revoked_at, token).toBe(now);
    expect((await store.getGrant("fam_rot"))?.revoked_at).toBe(now);
    expect(await store.rotateRefreshToken("ivoai_rt_rot_2", now, next(4))).toBe("ended");
    expect(await store.rotateRefreshToken("ivoai_rt_unknown", now, next(5))).toBe("ended");
  });

  it("lets one of 12 concurrent rotations of one refresh token win; the others revoke its family", async () => {
    const now = at(0);
    await addClient(store, "oc_rr");
    await store.addGrant(grantOf("fam_rr", "oc_rr"));
    await store.addToken(tokenOf("ivoai_rt_rr", "refresh", "fam_rr", "oc_rr"));
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (stores[i % 3] as OAuthStore).rotateRefreshToken("ivoai_rt_rr", now, [
          tokenOf(`ivoai_rt_rr_${i}`, "refresh", "fam_rr", "oc_rr"),
        ]),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === "rotated")).toHaveLength(1);
    // The first loser is a reuse and revokes the family; the later ones find the grant revoked.
    expect(outcomes.filter((outcome) => outcome === "reused").length).toBeGreaterThanOrEqual(1);
    expect(outcomes.filter((outcome) => outcome !== "rotated")).toHaveLength(11);
    expect((await store.getGrant("fam_rr"))?.revoked_at).toBe(now);
    const winner = outcomes.indexOf("rotated");
    expect((await other(2).getToken(`ivoai_rt_rr_${winner}`))?.revoked_at).toBe(now);
  });

  it("refuses a revoked grant's tokens on the next read of another connection, and revokes single tokens", async () => {
    const now = at(0);
    await addClient(store, "oc_rev");
    await store.addGrant(grantOf("fam_rev", "oc_rev"));
    await store.addToken(tokenOf("ivoai_at_rev", "access", "fam_rev", "oc_rev"));
    await store.addToken(tokenOf("ivoai_rt_rev", "refresh", "fam_rev", "oc_rev"));
    // Each connection reads first (a cache would now hold the token as valid).
    for (const each of stores) expect((await each.getToken("ivoai_at_rev"))?.revoked_at).toBeNull();
    const view = await store.revokeGrant("fam_rev", now);
    expect(view).toMatchObject({ id: "fam_rev", revoked_at: now, last_refreshed_at: null });
    for (const each of stores) {
      expect((await each.getToken("ivoai_at_rev"))?.revoked_at).toBe(now);
      expect((await each.getGrant("fam_rev"))?.revoked_at).toBe(now);
    }
    expect(await other(1).rotateRefreshToken("ivoai_rt_rev", now, [])).toBe("ended");
    // A token inserted into the family after its revocation is revoked with it.
    await store.addToken(tokenOf("ivoai_at_rev_late", "access", "fam_rev", "oc_rev"));
    expect((await other(2).getToken("ivoai_at_rev_late"))?.revoked_at).toBe(now);
    // revokeToken ends one token; revokeFamily ends a family.
    await store.addGrant(grantOf("fam_one", "oc_rev"));
    await store.addToken(tokenOf("ivoai_at_one", "access", "fam_one", "oc_rev"));
    await store.addToken(tokenOf("ivoai_rt_one", "refresh", "fam_one", "oc_rev"));
    await other(1).revokeToken("ivoai_at_one", now);
    expect((await other(2).getToken("ivoai_at_one"))?.revoked_at).toBe(now);
    expect((await other(2).getToken("ivoai_rt_one"))?.revoked_at).toBeNull();
    await other(2).revokeFamily("fam_one", now);
    expect((await store.getToken("ivoai_rt_one"))?.revoked_at).toBe(now);
  });

  it("ends tokens at their grant's end, refuses expired activation codes, requests and grants", async () => {
    const now = at(0);
    await addClient(store, "oc_exp");
    await store.addGrant(grantOf("fam_exp", "oc_exp", { expires_at: at(0.5) }));
    await store.addToken(tokenOf("ivoai_rt_exp", "refresh", "fam_exp", "oc_exp", { expires_at: at(24) }));
    expect((await store.getToken("ivoai_rt_exp"))?.expires_at).toBe(
      (await store.getGrant("fam_exp"))?.expires_at,
    );
    expect(await other(1).rotateRefreshToken("ivoai_rt_exp", at(0.6), [])).toBe("ended");
    expect((await store.getToken("ivoai_rt_exp"))?.used_at).toBeNull();
    await store.addActivationCode("ivoai_act_exp", at(-0.1), at(-0.2));
    expect(await store.consumeActivationCode("ivoai_act_exp", now)).toBe(false);
    expect(await store.consumeActivationCode("ivoai_act_unknown", now)).toBe(false);
    await store.addPending({
      id: "ar_exp",
      client_id: "oc_exp",
      redirect_uri: REDIRECT,
      code_challenge: "x",
      resource: "r",
      scopes: ["context:read"],
      state: null,
      csrf_sha256: "y",
      expires_at: at(-0.1),
    });
    expect(await other(2).takePending("ar_exp", now)).toBeUndefined();
    // Pruning drops codes, tokens and grants that ended more than a day ago.
    await store.addGrant(grantOf("fam_old", "oc_exp", { expires_at: at(-25) }));
    await store.addToken(tokenOf("ivoai_at_old", "access", "fam_old", "oc_exp", { expires_at: at(-25) }));
    await store.addCode(codeOf("ivoai_ac_old", "oc_exp", { expires_at: at(-25) }));
    await store.addCode(codeOf("ivoai_ac_new", "oc_exp", { expires_at: at(-1) }));
    await other(1).prune(now);
    expect(await store.getToken("ivoai_at_old")).toBeUndefined();
    expect(await store.getGrant("fam_old")).toBeUndefined();
    expect(await store.peekCode("ivoai_ac_old")).toBeUndefined();
    expect((await store.peekCode("ivoai_ac_new"))?.client_id).toBe("oc_exp");
    expect(await store.getGrant("fam_exp")).toBeDefined();
  });

  it("forgets clients that never completed an authorization within a day, and keeps the others", async () => {
    const registered = at(-25);
    for (const id of ["oc_idle", "oc_granted", "oc_consenting", "oc_coded", "oc_fresh"])
      await addClient(store, id, id === "oc_fresh" ? at(0) : registered);
    await store.addGrant(
      grantOf("fam_1", "oc_granted", { created_at: registered, expires_at: "2099-01-01T00:00:00.000Z" }),
    );
    await store.addPending({
      id: "par_1",
      client_id: "oc_consenting",
      redirect_uri: REDIRECT,
      code_challenge: "x",
      resource: "r",
      scopes: ["context:read"],
      state: null,
      csrf_sha256: "y",
      expires_at: at(0.2),
    });
    await store.addCode(codeOf("ivoai_ac_keep", "oc_coded", { expires_at: at(0.1) }));
    const names = async () =>
      (await other(1).listClients())
        .map((entry) => entry.client_id)
        .filter((id) => ["oc_idle", "oc_granted", "oc_consenting", "oc_coded", "oc_fresh"].includes(id))
        .sort();
    await store.prune(at(-2));
    expect(await names()).toHaveLength(5);
    await store.prune(at(0));
    expect(await names()).toEqual(["oc_coded", "oc_consenting", "oc_fresh", "oc_granted"]);
  });

  it("refuses a database that a newer ivoai migrated, with a clear message", async () => {
    const db = await kit.open("ivoai_oauth_newer");
    const current = await openOAuthStore(db);
    await current.close();
    const raw = await kit.open("ivoai_oauth_newer");
    await raw.run(
      "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('oauth', 99, 'future', $1)",
      [at(0)],
    );
    const error = await openOAuthStore(raw).catch((caught: unknown) => caught);
    expect(isIvoaiError(error) && error.code).toBe("STORE_VERSION");
    expect(String((error as Error).message)).toMatch(/oauth store is at schema version 99.*upgrade ivoai/);
  });
});

describe("OAuth store on an unversioned SQLite file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-oauth-store-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("upgrades a store from before grants: refresh families get a grant with the default lifetime", async () => {
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
    const store = await openOAuthStore(openSqliteSql(file));
    try {
      expect((await store.getClient("oc_old"))?.client_name).toBe("Old");
      const [client] = await store.listClients();
      expect(client).toMatchObject({ client_id: "oc_old", revoked_at: null });
      const grant = client?.grants[0];
      expect(grant).toMatchObject({ id: "fam_old", scopes: ["context:read"], revoked_at: null });
      // Stamped while the store opened, between `before` and now, however long a busy host took.
      const expires = Date.parse(grant?.expires_at ?? "");
      expect(expires).toBeGreaterThanOrEqual(before + LEGACY_GRANT_TTL_MS);
      expect(expires).toBeLessThanOrEqual(Date.now() + LEGACY_GRANT_TTL_MS);
      // The token now ends with its grant, not in 2099.
      expect((await store.getToken("ivoai_rt_old"))?.expires_at).toBe(grant?.expires_at);
    } finally {
      await store.close();
    }
  });

  it("adopts a file of today's unversioned schema as version 1, keeping its rows and in-flight codes", async () => {
    const file = path.join(dir, "oauth.sqlite");
    const old = new Database(file);
    old.exec(`
      CREATE TABLE clients (client_id TEXT PRIMARY KEY, client_name TEXT, redirect_uris TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT);
      CREATE TABLE pending (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at TEXT NOT NULL);
      CREATE TABLE codes (code_sha256 TEXT PRIMARY KEY, body TEXT NOT NULL, used_at TEXT);
      CREATE TABLE grants (id TEXT PRIMARY KEY, client_id TEXT NOT NULL, scopes TEXT NOT NULL, resource TEXT NOT NULL,
        created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT);
      INSERT INTO clients VALUES ('oc_today', NULL, '["http://127.0.0.1/cb"]', '2020-01-01T00:00:00.000Z', NULL);
      INSERT INTO codes VALUES ('${sha256Hex("ivoai_ac_today")}',
        '${JSON.stringify(codeOf("ivoai_ac_today", "oc_today", { expires_at: "2099-01-01T00:00:00.000Z" }))}', NULL);
    `);
    old.close();
    const store = await openOAuthStore(openSqliteSql(file));
    try {
      expect((await store.peekCode("ivoai_ac_today"))?.client_id).toBe("oc_today");
      // The code's client and expiry now live in columns: pruning keeps the client that holds a live code.
      await store.prune(at(0));
      expect((await store.listClients()).map((client) => client.client_id)).toEqual(["oc_today"]);
      expect(
        await store.redeemCode("ivoai_ac_today", at(0), {
          grant: grantOf("fam_today", "oc_today"),
          tokens: [tokenOf("ivoai_at_today", "access", "fam_today", "oc_today")],
        }),
      ).toBe(true);
    } finally {
      await store.close();
    }
    const check = new Database(file, { readonly: true });
    try {
      expect(
        check.prepare("SELECT version FROM schema_migrations WHERE store = 'oauth' ORDER BY version").all(),
      ).toEqual([{ version: 1 }, { version: 2 }]);
    } finally {
      check.close();
    }
  });
});
