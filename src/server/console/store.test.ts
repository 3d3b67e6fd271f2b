// What only the SQLite backend has: the file's permissions, every byte SQLite writes, and files written before
// the store was versioned. The store's behaviour on every backend is in store.contract.test.ts.
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverPaths } from "../../config/server-paths.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { sha256Hex } from "../../shared/tokens.js";
import { type StoreBackend, sqliteFileOf } from "../store/backend.js";
import { openSqliteSql } from "../store/sqlite.js";
import { csrfTokenFor } from "./session-auth.js";
import { consoleDbPath, openConsoleStore, openConsoleStoreOn } from "./store.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const T0 = new Date("2026-12-01T10:00:00.000Z");

describe("console store on SQLite", () => {
  let dir: string;
  let file: string;
  const sqlite: StoreBackend = {
    kind: "sqlite",
    open: async (domain) => openSqliteSql(sqliteFileOf(serverPaths(dir), domain)),
  };
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-console-store-"));
    file = consoleDbPath(serverPaths(dir));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Every byte SQLite wrote for the store (database, WAL and shared memory). */
  async function bytesAtRest(): Promise<string> {
    const names = (await readdir(path.dirname(file))).filter((name) => name.startsWith("console.sqlite"));
    return names.map((name) => readFileSync(path.join(path.dirname(file), name)).toString("latin1")).join("");
  }

  it("keeps only hashes of codes and session tokens, in a file only the server user can read", async () => {
    const store = await openConsoleStoreOn(sqlite, serverPaths(dir));
    try {
      const { code } = await store.createCode({ role: "approver", name: "Ana", ttlMs: 10 * MINUTE, now: T0 });
      const opened = await store.exchangeCode(code, new Date(T0.getTime() + MINUTE), 12 * HOUR);
      expect(opened).toBeDefined();
      const token = opened?.token ?? "";
      const stored = await bytesAtRest();
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(csrfTokenFor(token));
      expect(stored).toContain(sha256Hex(token));
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    } finally {
      await store.close();
    }
  });

  it("adopts a file written before versioning: its sessions stay valid", async () => {
    await openConsoleStoreOn(sqlite, serverPaths(dir)).then((store) => store.close());
    // The file as the unversioned store left it: its tables and a session, no schema_migrations.
    const old = openSqlite(file);
    old.exec("DROP TABLE schema_migrations");
    old
      .prepare(
        `INSERT INTO sessions (id, token_sha256, role, name, created_at, expires_at, last_seen_at)
         VALUES ('cs_old', ?, 'viewer', 'Ivy', ?, ?, ?)`,
      )
      .run(
        sha256Hex("ivoai_cs_old"),
        T0.toISOString(),
        new Date(T0.getTime() + HOUR).toISOString(),
        T0.toISOString(),
      );
    old.close();
    const store = await openConsoleStore(openSqliteSql(file));
    try {
      expect(await store.findSession("ivoai_cs_old")).toMatchObject({
        id: "cs_old",
        name: "Ivy",
        revoked_at: null,
      });
    } finally {
      await store.close();
    }
  });
});
