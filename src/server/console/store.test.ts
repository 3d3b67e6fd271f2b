import { readFileSync, statSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CONSOLE_CODE_PREFIX } from "../../protocol/console-api.js";
import { sha256Hex } from "../../shared/tokens.js";
import { csrfTokenFor } from "./session-auth.js";
import { type ConsoleStore, consoleSessionState, idleEnd, openConsoleStore } from "./store.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = new Date("2026-12-01T10:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

describe("console store", () => {
  let dir: string;
  let file: string;
  let store: ConsoleStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-console-store-"));
    file = path.join(dir, "enrollment", "console.sqlite");
    store = openConsoleStore(file);
  });
  afterEach(async () => {
    store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Every byte SQLite wrote for the store (database, WAL and shared memory). */
  async function bytesAtRest(): Promise<string> {
    const names = (await readdir(path.dirname(file))).filter((name) => name.startsWith("console.sqlite"));
    return names.map((name) => readFileSync(path.join(path.dirname(file), name)).toString("latin1")).join("");
  }

  it("keeps only hashes of codes and session tokens, in a file only the server user can read", async () => {
    const { code } = store.createCode({ role: "approver", name: "Ana", ttlMs: 10 * MINUTE, now: T0 });
    expect(code.startsWith(CONSOLE_CODE_PREFIX)).toBe(true);
    const opened = store.exchangeCode(code, at(MINUTE), 12 * HOUR);
    expect(opened).toBeDefined();
    const token = opened?.token ?? "";
    const stored = await bytesAtRest();
    expect(stored).not.toContain(code);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(csrfTokenFor(token));
    expect(stored).toContain(sha256Hex(token));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  });

  it("spends a code once, never after it expired", () => {
    const first = store.createCode({ role: "viewer", name: "Bo", ttlMs: 10 * MINUTE, now: T0 });
    const opened = store.exchangeCode(first.code, at(MINUTE), 12 * HOUR);
    expect(opened?.session).toMatchObject({ role: "viewer", name: "Bo", revoked_at: null });
    expect(opened?.session.expires_at).toBe(at(MINUTE + 12 * HOUR).toISOString());
    expect(store.exchangeCode(first.code, at(2 * MINUTE), 12 * HOUR)).toBeUndefined();

    const late = store.createCode({ role: "viewer", name: "Bo", ttlMs: 10 * MINUTE, now: T0 });
    expect(store.exchangeCode(late.code, at(10 * MINUTE), 12 * HOUR)).toBeUndefined();
    expect(store.exchangeCode(`${CONSOLE_CODE_PREFIX}unknown`, T0, 12 * HOUR)).toBeUndefined();
  });

  it("finds a session by its token and ends it when idle, past its absolute end or revoked", () => {
    const { code } = store.createCode({ role: "admin", name: "Cy", ttlMs: 10 * MINUTE, now: T0 });
    const opened = store.exchangeCode(code, T0, 12 * HOUR);
    if (!opened) throw new Error("no session");
    const idleMs = 30 * MINUTE;
    const session = store.findSession(opened.token);
    expect(session?.id).toBe(opened.session.id);
    const last = opened.token.endsWith("A") ? "B" : "A";
    expect(store.findSession(`${opened.token.slice(0, -1)}${last}`)).toBeUndefined();
    if (!session) throw new Error("not found");

    expect(consoleSessionState(session, at(29 * MINUTE), idleMs)).toBe("active");
    expect(consoleSessionState(session, at(30 * MINUTE), idleMs)).toBe("idle");
    store.touch(session.id, at(29 * MINUTE));
    const touched = store.findSession(opened.token);
    if (!touched) throw new Error("not found");
    expect(consoleSessionState(touched, at(58 * MINUTE), idleMs)).toBe("active");
    expect(idleEnd(touched, idleMs)).toBe(at(59 * MINUTE).toISOString());
    // Activity never extends the absolute end.
    store.touch(session.id, at(12 * HOUR - MINUTE));
    const late = store.findSession(opened.token);
    if (!late) throw new Error("not found");
    expect(idleEnd(late, idleMs)).toBe(at(12 * HOUR).toISOString());
    expect(consoleSessionState(late, at(12 * HOUR), idleMs)).toBe("expired");

    expect(store.revoke(session.id, at(HOUR))?.revoked_at).toBe(at(HOUR).toISOString());
    const revoked = store.findSession(opened.token);
    expect(revoked && consoleSessionState(revoked, at(HOUR), idleMs)).toBe("revoked");
    expect(store.revoke("cs_unknown", at(HOUR))).toBeUndefined();
  });

  it("revokes all live sessions and prunes what ended more than a day ago", () => {
    const open = () => {
      const { code } = store.createCode({ role: "viewer", name: "Di", ttlMs: 10 * MINUTE, now: T0 });
      const opened = store.exchangeCode(code, T0, 12 * HOUR);
      if (!opened) throw new Error("no session");
      return opened.session.id;
    };
    const first = open();
    const second = open();
    expect(store.revokeAll(at(MINUTE))).toBe(2);
    expect(store.revokeAll(at(MINUTE))).toBe(0);
    const unused = store.createCode({ role: "viewer", name: "Di", ttlMs: 10 * MINUTE, now: T0 });
    store.prune(at(2 * MINUTE), 30 * MINUTE);
    expect(
      store
        .listSessions()
        .map((row) => row.id)
        .sort(),
    ).toEqual([first, second].sort());
    store.prune(at(25 * HOUR), 30 * MINUTE);
    expect(store.listSessions()).toEqual([]);
    // The unused code expired and was dropped: it no longer opens anything.
    expect(store.exchangeCode(unused.code, at(5 * MINUTE), 12 * HOUR)).toBeUndefined();
  });
});
