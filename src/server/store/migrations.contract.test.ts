import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isIvoaiError } from "../../shared/errors.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { describeBackends } from "./backends.test-kit.js";
import {
  type Migration,
  migrate,
  migrateSqliteSync,
  migrationChecksum,
  schemaStanding,
} from "./migrations.js";

const NOTES: readonly Migration[] = [
  {
    version: 1,
    name: "notes",
    up: {
      sqlite: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
      postgres: "CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT NOT NULL)",
    },
  },
  { version: 2, name: "tags", up: "ALTER TABLE notes ADD COLUMN tags TEXT" },
];

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** NOTES with version 1's text edited after release (a comment added: same schema, other text). */
const EDITED: readonly Migration[] = [
  {
    ...(NOTES[0] as Migration),
    up: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) -- tidied",
  },
  NOTES[1] as Migration,
];

/** The table and rows an ivoai before checksums left: no checksum column. */
const OLDER_TABLE = `CREATE TABLE schema_migrations (
  store TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL,
  PRIMARY KEY (store, version)
)`;

describeBackends("migrations", (kit) => {
  const v1 = (NOTES[0] as Migration).up as Record<string, string>;

  it("records the SHA-256 of the exact text applied on this backend", async () => {
    const db = await kit.open("recorded");
    try {
      expect(await migrate(db, "notes", NOTES)).toEqual({ from: 0, to: 2 });
      expect(
        await db.all(
          "SELECT version, checksum FROM schema_migrations WHERE store = 'notes' ORDER BY version",
        ),
      ).toEqual([
        { version: 1, checksum: sha256(v1[kit.dialect] as string) },
        { version: 2, checksum: sha256("ALTER TABLE notes ADD COLUMN tags TEXT") },
      ]);
    } finally {
      await db.close();
    }
  });

  it("refuses to start when a released migration's text was edited, naming the store, version and fix", async () => {
    const db = await kit.open("tampered");
    try {
      await migrate(db, "notes", NOTES);
      const error = await migrate(db, "notes", EDITED).catch((caught: unknown) => caught);
      expect(isIvoaiError(error) && error.code).toBe("STORE_MIGRATION_CHANGED");
      expect((error as Error).message).toMatch(/the notes store's migration 1 \("notes"\)/);
      expect((error as Error).message).toMatch(/put migration 1 back as it was released.*new migration 3/);
      expect((error as { data?: unknown }).data).toMatchObject({ store: "notes", version: 1 });
      // Edited after a new version was added too: still refused, and nothing was applied or rewritten.
      const later = [...EDITED, { version: 3, name: "more", up: "ALTER TABLE notes ADD COLUMN extra TEXT" }];
      await expect(migrate(db, "notes", later)).rejects.toMatchObject({ code: "STORE_MIGRATION_CHANGED" });
      expect(await db.get("SELECT MAX(version) AS v FROM schema_migrations")).toEqual({ v: 2 });
      expect(await migrate(db, "notes", NOTES)).toEqual({ from: 2, to: 2 });
    } finally {
      await db.close();
    }
  });

  it("starts on a table an older release wrote: adds the checksum column and back-fills it", async () => {
    const db = await kit.open("older");
    try {
      await db.exec(OLDER_TABLE);
      await db.exec(v1[kit.dialect] as string);
      await db.run(
        "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('notes', 1, 'notes', $1)",
        ["2026-01-01T00:00:00.000Z"],
      );
      await db.run("INSERT INTO notes (id, body) VALUES (1, 'kept')");
      expect(await migrate(db, "notes", NOTES)).toEqual({ from: 1, to: 2 });
      expect(
        await db.all(
          "SELECT version, checksum FROM schema_migrations WHERE store = 'notes' ORDER BY version",
        ),
      ).toEqual([
        { version: 1, checksum: sha256(v1[kit.dialect] as string) },
        { version: 2, checksum: sha256("ALTER TABLE notes ADD COLUMN tags TEXT") },
      ]);
      expect(await db.get("SELECT body FROM notes WHERE id = 1")).toEqual({ body: "kept" });
      // Once back-filled, the check holds on the next start.
      await expect(migrate(db, "notes", EDITED)).rejects.toMatchObject({ code: "STORE_MIGRATION_CHANGED" });
    } finally {
      await db.close();
    }
  });

  if (kit.dialect === "sqlite")
    it("runs the same steps synchronously on a SQLite file: same table, same checksums, same refusal", async () => {
      const file = kit.sqliteFile?.("sync") as string;
      const sync = openSqlite(file);
      try {
        expect(migrateSqliteSync(sync, "notes", NOTES.slice(0, 1))).toEqual({ from: 0, to: 1 });
      } finally {
        sync.close();
      }
      const db = await kit.open("sync");
      try {
        expect(await migrate(db, "notes", NOTES)).toEqual({ from: 1, to: 2 });
        expect(await db.get("SELECT checksum FROM schema_migrations WHERE version = 1")).toEqual({
          checksum: sha256(v1.sqlite as string),
        });
      } finally {
        await db.close();
      }
      const again = openSqlite(file);
      try {
        expect(() => migrateSqliteSync(again, "notes", EDITED)).toThrow(/migration 1 \("notes"\)/);
        expect(migrateSqliteSync(again, "notes", NOTES)).toEqual({ from: 2, to: 2 });
      } finally {
        again.close();
      }
    });
});

describe("what the doctor reads of each store's migrations, without changing them", () => {
  it("on PostgreSQL: applied versions with their checksums, none for a store never created, null before checksums", async () => {
    const { createThrowawayDatabase } = await import("../../../test/postgres.js");
    const { openPostgresSql, postgresAppliedMigrations } = await import("./postgres.js");
    const database = await createThrowawayDatabase();
    try {
      const audit = await openPostgresSql({ url: database.url, schema: "ivoai_audit" });
      await migrate(audit, "audit", NOTES).finally(() => audit.close());
      const older = await openPostgresSql({ url: database.url, schema: "ivoai_oauth" });
      try {
        await older.exec(OLDER_TABLE);
        await older.run(
          "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('oauth', 1, 'notes', 'x')",
        );
      } finally {
        await older.close();
      }
      const applied = await postgresAppliedMigrations(database.url, ["audit", "console", "oauth"]);
      expect(applied.get("audit")).toEqual([
        { version: 1, checksum: migrationChecksum(NOTES[0] as Migration, "postgres") },
        { version: 2, checksum: migrationChecksum(NOTES[1] as Migration, "postgres") },
      ]);
      expect(applied.get("console")).toBeUndefined();
      expect(applied.get("oauth")).toEqual([{ version: 1, checksum: null }]);
      expect(schemaStanding(NOTES, "postgres", applied.get("audit"))).toEqual({
        state: "current",
        version: 2,
        latest: 2,
      });
      expect(schemaStanding(EDITED, "postgres", applied.get("audit"))).toMatchObject({
        state: "edited",
        edited: 1,
      });
      expect(schemaStanding(NOTES, "postgres", applied.get("oauth"))).toMatchObject({ state: "behind" });
      expect(schemaStanding(NOTES, "postgres", applied.get("console"))).toEqual({ state: "absent" });
    } finally {
      await database.drop();
    }
  });
});
