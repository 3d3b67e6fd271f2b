import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isIvoaiError } from "./errors.js";
import { checkNativeSqlite, openSqlite } from "./native-sqlite.js";

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
