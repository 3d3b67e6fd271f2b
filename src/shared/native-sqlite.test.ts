import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isIvoaiError } from "./errors.js";
import { checkNativeSqlite, inList, openSqlite, statementCache } from "./native-sqlite.js";

describe("native SQLite loading", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("reports the working addon with SQLite's version", () => {
    const health = checkNativeSqlite();
    expect(health).toMatchObject({ healthy: true, version: expect.stringMatching(/^3\.\d+\.\d+$/) });
  });

  it("turns an addon that cannot be loaded into one line saying what to rebuild", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-native-"));
    dirs.push(dir);
    const broken = path.join(dir, "better_sqlite3.node");
    await writeFile(broken, "not a shared object");
    let caught: unknown;
    try {
      openSqlite(":memory:", { nativeBinding: broken });
    } catch (error) {
      caught = error;
    }
    expect(isIvoaiError(caught) && caught.code).toBe("NATIVE_MODULE");
    const message = (caught as Error).message;
    expect(message).toMatch(/^the native SQLite module cannot be loaded \(.*better_sqlite3\.node/);
    expect(message).toMatch(/run "npm rebuild better-sqlite3" in \//);
    expect(message).not.toContain("\n");
  });

  it("leaves ordinary SQLite failures alone", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-native-"));
    dirs.push(dir);
    expect(() => openSqlite(path.join(dir, "absent.db"), { fileMustExist: true })).toThrow(
      expect.objectContaining({ code: "SQLITE_CANTOPEN" }),
    );
  });
});

describe("statementCache", () => {
  it("prepares an IN-list query once per length and answers each call with its own values", () => {
    const db = openSqlite(":memory:");
    try {
      db.exec(
        "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c');",
      );
      const prepared = statementCache(db, 2);
      const query = (keys: number[]) => prepared(`SELECT v FROM t WHERE k IN (${inList(keys)}) ORDER BY k`);
      const first = query([1, 2]);
      expect(first.all(1, 2)).toEqual([{ v: "a" }, { v: "b" }]);
      expect(query([2, 3])).toBe(first);
      expect(query([2, 3]).all(2, 3)).toEqual([{ v: "b" }, { v: "c" }]);
      expect(query([3])).not.toBe(first);
      // Past its bound the cache keeps what it has and prepares the rest each time.
      const overflow = prepared("SELECT 1 AS one");
      expect(prepared("SELECT 1 AS one")).not.toBe(overflow);
      expect(overflow.get()).toEqual({ one: 1 });
    } finally {
      db.close();
    }
  });
});
