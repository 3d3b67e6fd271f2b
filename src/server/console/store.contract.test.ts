// The console store's contract, run on SQLite and on PostgreSQL: hashes only at rest, single-use codes, idle,
// absolute and revoked sessions, pruning, sessions shared by every connection (replica), the version check.
import { afterEach, beforeEach, expect, it } from "vitest";
import { CONSOLE_CODE_PREFIX } from "../../protocol/console-api.js";
import { sha256Hex } from "../../shared/tokens.js";
import { describeBackends } from "../store/backends.test-kit.js";
import { csrfTokenFor } from "./session-auth.js";
import { type ConsoleStore, consoleSessionState, idleEnd, openConsoleStore } from "./store.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = new Date("2026-12-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

describeBackends("console store", (kit) => {
  let schemas = 0;
  let schema: string;
  let store: ConsoleStore;
  const opened: ConsoleStore[] = [];
  const open = async () => {
    const opening = await openConsoleStore(await kit.open(schema));
    opened.push(opening);
    return opening;
  };

  beforeEach(async () => {
    schemas += 1;
    schema = `console_t${schemas}`;
    store = await open();
  });
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
  });

  it("keeps only hashes of codes and session tokens", async () => {
    const { code } = await store.createCode({ role: "approver", name: "Ana", ttlMs: 10 * MINUTE, now: T0 });
    expect(code.startsWith(CONSOLE_CODE_PREFIX)).toBe(true);
    const opened = await store.exchangeCode(code, at(MINUTE), 12 * HOUR);
    expect(opened).toBeDefined();
    const token = opened?.token ?? "";
    const db = await kit.open(schema);
    try {
      const stored = JSON.stringify([
        await db.all("SELECT * FROM codes"),
        await db.all("SELECT * FROM sessions"),
      ]);
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(csrfTokenFor(token));
      expect(stored).toContain(sha256Hex(token));
      expect(stored).toContain(sha256Hex(code));
    } finally {
      await db.close();
    }
  });

  it("spends a code once, never after it expired", async () => {
    const first = await store.createCode({ role: "viewer", name: "Bo", ttlMs: 10 * MINUTE, now: T0 });
    const opened = await store.exchangeCode(first.code, at(MINUTE), 12 * HOUR);
    expect(opened?.session).toMatchObject({ role: "viewer", name: "Bo", revoked_at: null });
    expect(opened?.session.expires_at).toBe(at(MINUTE + 12 * HOUR).toISOString());
    expect(await store.exchangeCode(first.code, at(2 * MINUTE), 12 * HOUR)).toBeUndefined();

    const late = await store.createCode({ role: "viewer", name: "Bo", ttlMs: 10 * MINUTE, now: T0 });
    expect(await store.exchangeCode(late.code, at(10 * MINUTE), 12 * HOUR)).toBeUndefined();
    expect(await store.exchangeCode(`${CONSOLE_CODE_PREFIX}unknown`, T0, 12 * HOUR)).toBeUndefined();
  });

  it("finds a session by its token and ends it when idle, past its absolute end or revoked", async () => {
    const { code } = await store.createCode({ role: "admin", name: "Cy", ttlMs: 10 * MINUTE, now: T0 });
    const opened = await store.exchangeCode(code, T0, 12 * HOUR);
    if (!opened) throw new Error("no session");
    const idleMs = 30 * MINUTE;
    const session = await store.findSession(opened.token);
    expect(session?.id).toBe(opened.session.id);
    expect(session).toEqual(opened.session);
    const last = opened.token.endsWith("A") ? "B" : "A";
    expect(await store.findSession(`${opened.token.slice(0, -1)}${last}`)).toBeUndefined();
    if (!session) throw new Error("not found");

    expect(consoleSessionState(session, at(29 * MINUTE), idleMs)).toBe("active");
    expect(consoleSessionState(session, at(30 * MINUTE), idleMs)).toBe("idle");
    await store.touch(session.id, at(29 * MINUTE));
    const touched = await store.findSession(opened.token);
    if (!touched) throw new Error("not found");
    expect(consoleSessionState(touched, at(58 * MINUTE), idleMs)).toBe("active");
    expect(idleEnd(touched, idleMs)).toBe(at(59 * MINUTE).toISOString());
    // An older activity never moves the idle end back.
    await store.touch(session.id, at(10 * MINUTE));
    expect((await store.findSession(opened.token))?.last_seen_at).toBe(at(29 * MINUTE).toISOString());
    // Activity never extends the absolute end.
    await store.touch(session.id, at(12 * HOUR - MINUTE));
    const late = await store.findSession(opened.token);
    if (!late) throw new Error("not found");
    expect(idleEnd(late, idleMs)).toBe(at(12 * HOUR).toISOString());
    expect(consoleSessionState(late, at(12 * HOUR), idleMs)).toBe("expired");

    expect((await store.revoke(session.id, at(HOUR)))?.revoked_at).toBe(at(HOUR).toISOString());
    // Revoking again keeps the first time.
    expect((await store.revoke(session.id, at(2 * HOUR)))?.revoked_at).toBe(at(HOUR).toISOString());
    const revoked = await store.findSession(opened.token);
    expect(revoked && consoleSessionState(revoked, at(HOUR), idleMs)).toBe("revoked");
    expect(await store.revoke("cs_unknown", at(HOUR))).toBeUndefined();
  });

  it("revokes all live sessions and prunes what ended more than a day ago", async () => {
    const openSession = async () => {
      const { code } = await store.createCode({ role: "viewer", name: "Di", ttlMs: 10 * MINUTE, now: T0 });
      const opened = await store.exchangeCode(code, T0, 12 * HOUR);
      if (!opened) throw new Error("no session");
      return opened.session.id;
    };
    const first = await openSession();
    const second = await openSession();
    expect(await store.revokeAll(at(MINUTE))).toBe(2);
    expect(await store.revokeAll(at(MINUTE))).toBe(0);
    const unused = await store.createCode({ role: "viewer", name: "Di", ttlMs: 10 * MINUTE, now: T0 });
    await store.prune(at(2 * MINUTE), 30 * MINUTE);
    expect((await store.listSessions()).map((row) => row.id).sort()).toEqual([first, second].sort());
    await store.prune(at(25 * HOUR), 30 * MINUTE);
    expect(await store.listSessions()).toEqual([]);
    // The unused code expired and was dropped: it no longer opens anything.
    expect(await store.exchangeCode(unused.code, at(5 * MINUTE), 12 * HOUR)).toBeUndefined();
  });

  it("prunes a live but idle session only a day after its idle end", async () => {
    const { code } = await store.createCode({ role: "viewer", name: "Ed", ttlMs: 10 * MINUTE, now: T0 });
    const opened = await store.exchangeCode(code, T0, 48 * HOUR);
    if (!opened) throw new Error("no session");
    await store.prune(at(30 * MINUTE + 24 * HOUR), 30 * MINUTE);
    expect((await store.listSessions()).map((row) => row.id)).toEqual([opened.session.id]);
    await store.prune(at(30 * MINUTE + 24 * HOUR + 1), 30 * MINUTE);
    expect(await store.listSessions()).toEqual([]);
  });

  it("lists sessions newest first, in one order on every backend", async () => {
    const ids: string[] = [];
    for (const minute of [0, 2, 1, 2]) {
      const { code } = await store.createCode({ role: "viewer", name: "Fy", ttlMs: HOUR, now: T0 });
      const opened = await store.exchangeCode(code, at(minute * MINUTE), 12 * HOUR);
      ids.push(opened?.session.id ?? "");
    }
    const [a, b, c, d] = ids as [string, string, string, string];
    const listed = (await store.listSessions()).map((row) => row.id);
    // Ties (the same creation time) by id, in code-point order.
    expect(listed).toEqual([...[b, d].sort(), c, a]);
  });

  it("shares sessions between connections: opened on one replica, valid and revocable on another", async () => {
    const other = await open();
    const { code } = await store.createCode({ role: "approver", name: "Gus", ttlMs: 10 * MINUTE, now: T0 });
    const opened = await other.exchangeCode(code, at(MINUTE), 12 * HOUR);
    if (!opened) throw new Error("the second connection did not accept the code");
    expect(await store.findSession(opened.token)).toEqual(opened.session);
    await store.touch(opened.session.id, at(20 * MINUTE));
    expect((await other.findSession(opened.token))?.last_seen_at).toBe(at(20 * MINUTE).toISOString());
    await other.revoke(opened.session.id, at(30 * MINUTE));
    const seen = await store.findSession(opened.token);
    expect(seen && consoleSessionState(seen, at(31 * MINUTE), 30 * MINUTE)).toBe("revoked");
    expect(await other.exchangeCode(code, at(2 * MINUTE), 12 * HOUR)).toBeUndefined();
  });

  it("lets exactly one of racing exchanges on two connections spend a code", async () => {
    const other = await open();
    for (let round = 0; round < 10; round++) {
      const { code } = await store.createCode({ role: "viewer", name: "Hal", ttlMs: HOUR, now: T0 });
      const results = await Promise.all(
        [store, other, store, other].map((each) => each.exchangeCode(code, at(MINUTE), HOUR)),
      );
      expect(results.filter((result) => result !== undefined)).toHaveLength(1);
    }
    expect(await store.listSessions()).toHaveLength(10);
  });

  it("refuses a database that a newer ivoai migrated", async () => {
    const db = await kit.open(schema);
    await db.run(
      "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('console', 2, 'future', $1)",
      [new Date().toISOString()],
    );
    await db.close();
    await expect(openConsoleStore(await kit.open(schema))).rejects.toMatchObject({
      code: "STORE_VERSION",
      message: expect.stringMatching(/console store is at schema version 2/),
    });
  });
});
