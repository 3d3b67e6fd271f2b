import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqlite } from "../../shared/native-sqlite.js";
import { migrationChecksum } from "../store/migrations.js";
import { openSqliteSql } from "../store/sqlite.js";
import { MEMORY_META_SCHEMA, MEMORY_MIGRATIONS, prepareMemoryFile } from "./schema.js";
import { createMemoryStore } from "./store.js";

describe("memory schema: the restore's synchronous preparation", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ivoai-memory-schema-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const rows = (file: string) => {
    const db = openSqlite(file, { readonly: true });
    try {
      return {
        migrations: db.prepare("SELECT store, version, checksum FROM schema_migrations").all(),
        schema: db.prepare("SELECT value FROM meta WHERE key = 'schema'").get(),
      };
    } finally {
      db.close();
    }
  };

  it("records the same migrations and checksums as the store's open, and the schema number they make", async () => {
    const file = path.join(dir, "prepared.sqlite");
    prepareMemoryFile(file);
    const expected = {
      migrations: MEMORY_MIGRATIONS.map((migration) => ({
        store: "memory",
        version: migration.version,
        checksum: migrationChecksum(migration, "sqlite"),
      })),
      schema: { value: String(MEMORY_META_SCHEMA) },
    };
    expect(rows(file)).toEqual(expected);
    // The store opens what restore prepared (the one migrate() finds its own rows), and leaves them as they are.
    const store = await createMemoryStore(openSqliteSql(file));
    await store.close();
    expect(rows(file)).toEqual(expected);
  });

  it("refuses a file whose applied migration differs from this build's, as a start does", () => {
    const file = path.join(dir, "edited.sqlite");
    prepareMemoryFile(file);
    const db = openSqlite(file);
    db.prepare("UPDATE schema_migrations SET checksum = ? WHERE version = 1").run("0".repeat(64));
    db.close();
    expect(() => prepareMemoryFile(file)).toThrow(/memory store's migration 1/);
  });
});
