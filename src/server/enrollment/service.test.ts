import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqlite } from "../../shared/native-sqlite.js";
import { sha256Hex } from "../../shared/tokens.js";
import { openSqliteSql, wrapSqlite } from "../store/sqlite.js";
import { createRateLimiter } from "./rate-limit.js";
import { createEnrollmentService, type EnrollmentService } from "./service.js";
import { type EnrollmentStore, openEnrollmentStore } from "./store.js";

describe("enrollment service", () => {
  let dir: string;
  let store: EnrollmentStore;
  let clock: Date;
  let service: EnrollmentService;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-enroll-"));
    store = await openEnrollmentStore({ db: openSqliteSql(path.join(dir, "enrollment.sqlite")) });
    clock = new Date("2026-01-01T00:00:00Z");
    service = createEnrollmentService({ store, now: () => clock });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("exchanges a code once for a credential that authenticates until revoked", async () => {
    const { code, enrollment } = await service.createCode({ ttlMs: 600_000 });
    const exchanged = await service.exchange(code, "laptop");
    if (!exchanged.ok) throw new Error("exchange failed");
    expect(exchanged.client.enrollment_id).toBe(enrollment.id);
    expect(await service.exchange(code, "again")).toEqual({ ok: false, reason: "consumed" });
    expect(await service.authenticate(exchanged.credential)).toMatchObject({
      id: exchanged.client.id,
      name: "laptop",
    });
    expect(await service.authenticate(`${exchanged.credential.slice(0, -1)}x`)).toBeUndefined();
    await service.revokeClient(exchanged.client.id);
    expect(await service.authenticate(exchanged.credential)).toBeUndefined();

    // The database and its write-ahead log hold the credential's hash, never the code or the credential.
    const onDisk = (
      await Promise.all(
        ["enrollment.sqlite", "enrollment.sqlite-wal"].map((name) =>
          readFile(path.join(dir, name), "latin1").catch(() => ""),
        ),
      )
    ).join("");
    expect(onDisk).toContain(sha256Hex(exchanged.credential));
    expect(onDisk).not.toContain(code);
    expect(onDisk).not.toContain(exchanged.credential);
  });

  it("answers a known credential from its cache, and refuses it on the next request after a revocation made elsewhere", async () => {
    const { code } = await service.createCode({ ttlMs: 600_000 });
    const exchanged = await service.exchange(code, "laptop");
    if (!exchanged.ok) throw new Error("exchange failed");
    const first = await service.authenticate(exchanged.credential);
    // The same answer object: the state was not re-read nor the credential looked up again.
    expect(await service.authenticate(exchanged.credential)).toBe(first);
    // Another process's store on the same file, through its own connection (the CLI's `server clients revoke`).
    const otherStore = await openEnrollmentStore({
      db: wrapSqlite(openSqlite(path.join(dir, "enrollment.sqlite"))),
    });
    try {
      await createEnrollmentService({ store: otherStore }).revokeClient(exchanged.client.id);
    } finally {
      await otherStore.close();
    }
    expect(await service.authenticate(exchanged.credential)).toBeUndefined();
  });

  it("tells expired, revoked and unknown codes apart internally (the wire answer is uniform)", async () => {
    const expiring = await service.createCode({ ttlMs: 1_000 });
    const revoked = await service.createCode({ ttlMs: 600_000 });
    await service.revokeCode(revoked.enrollment.id);
    clock = new Date(clock.getTime() + 1_000);
    expect(await service.exchange(expiring.code, "x")).toEqual({ ok: false, reason: "expired" });
    expect(await service.exchange(revoked.code, "x")).toEqual({ ok: false, reason: "revoked" });
    expect(await service.exchange("ivoai_enr_nope", "x")).toEqual({ ok: false, reason: "invalid" });
    expect((await service.listCodes()).map((code) => code.status).sort()).toEqual(["expired", "revoked"]);
  });

  it("keeps the scopes chosen at creation and names unknown ids", async () => {
    const { code } = await service.createCode({ ttlMs: 60_000, scopes: ["context:read"] });
    const exchanged = await service.exchange(code, "ci");
    expect(exchanged.ok && exchanged.client.scopes).toEqual(["context:read"]);
    await expect(service.revokeClient("cli_missing")).rejects.toThrow(/no client with id cli_missing/);
    await expect(service.revokeCode("enr_missing")).rejects.toThrow(/no enrollment code/);
  });

  it("prunes ended codes after 30 days but keeps clients", async () => {
    const { code } = await service.createCode({ ttlMs: 60_000 });
    await service.exchange(code, "old");
    clock = new Date(clock.getTime() + 31 * 86_400_000);
    await service.createCode({ ttlMs: 60_000 });
    expect(await service.listCodes()).toHaveLength(1);
    expect(await service.listClients()).toHaveLength(1);
  });
});

describe("rate limiter", () => {
  it("allows a budget per source per minute, then asks to wait", () => {
    let now = 0;
    const limiter = createRateLimiter({ perMinute: 2, now: () => now });
    expect(limiter.hit("a").allowed).toBe(true);
    expect(limiter.hit("a").allowed).toBe(true);
    expect(limiter.hit("a")).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(limiter.hit("b").allowed).toBe(true);
    now = 60_000;
    expect(limiter.hit("a").allowed).toBe(true);
  });
});
