// Versioned, ordered schema migrations per store, on either backend. Each store keeps the versions it applied in
// its own `schema_migrations` table, with the SHA-256 of the exact DDL text applied: a start applies what is
// missing in one transaction, refuses a database that a newer ivoai has migrated further than this one knows, and
// refuses a build whose released migration text was edited since it ran here (a migration is frozen once
// released: a change is a new version). The steps are written once (sql-steps.ts) and run asynchronously on
// every store's open, or synchronously on a SQLite file where backup restore needs it.
import { createHash } from "node:crypto";
import { IvoaiError } from "../../shared/errors.js";
import { openSqlite, type SqliteDatabase } from "../../shared/native-sqlite.js";
import type { Dialect, SqlDatabase } from "./sql.js";
import { runSteps, runStepsSync, type SqlSteps, stepAll, stepExec, stepRun } from "./sql-steps.js";

export interface Migration {
  /** 1, 2, 3…: contiguous and never reused once released. */
  version: number;
  name: string;
  /**
   * The DDL, the same on both backends or one text per backend: a literal, frozen once released (its SHA-256
   * is checked at every start), never computed at run time from other constants.
   */
  up: string | Record<Dialect, string>;
}

export interface MigrationResult {
  from: number;
  to: number;
}

const TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  store TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, checksum TEXT,
  PRIMARY KEY (store, version)
)`;

/** The DDL a migration runs on `dialect`. */
export function migrationText(migration: Migration, dialect: Dialect): string {
  return typeof migration.up === "string" ? migration.up : migration.up[dialect];
}

/** The SHA-256 (hex) of the exact text a migration runs on `dialect`: what schema_migrations records. */
export function migrationChecksum(migration: Migration, dialect: Dialect): string {
  return createHash("sha256").update(migrationText(migration, dialect), "utf8").digest("hex");
}

/** Applies the missing migrations of `store`; several processes may run this at once (one does the work). */
export async function migrate(
  db: SqlDatabase,
  store: string,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
): Promise<MigrationResult> {
  checkNumbering(store, migrations);
  return db.transaction((tx) => runSteps(tx, migrationSteps(tx.dialect, store, migrations, now)));
}

/**
 * The same steps as `migrate`, synchronously on an open SQLite connection (backup restore prepares files
 * without running the event loop between its steps). Runs inside the caller's transaction when there is one,
 * else in its own IMMEDIATE transaction.
 */
export function migrateSqliteSync(
  db: SqliteDatabase,
  store: string,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
): MigrationResult {
  checkNumbering(store, migrations);
  const work = () => runStepsSync(db, migrationSteps("sqlite", store, migrations, now));
  return db.inTransaction ? work() : db.transaction(work).immediate();
}

function checkNumbering(store: string, migrations: readonly Migration[]): void {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`${store} migrations must be numbered 1, 2, 3…`);
  });
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string | null;
}

function* migrationSteps(
  dialect: Dialect,
  store: string,
  migrations: readonly Migration[],
  now: () => Date,
): SqlSteps<MigrationResult> {
  // Replicas starting together: the first migrates, the others wait here and find nothing left to do.
  if (dialect === "postgres")
    yield* stepAll("SELECT pg_advisory_xact_lock(hashtext($1))", [`ivoai:${store}`]);
  yield* stepExec(TABLE);
  yield* addChecksumColumn(dialect);
  const applied = yield* stepAll<AppliedRow>(
    "SELECT version, name, checksum FROM schema_migrations WHERE store = $1 ORDER BY version",
    [store],
  );
  const from = applied.reduce((max, row) => Math.max(max, Number(row.version)), 0);
  const latest = migrations.length;
  if (from > latest)
    throw new IvoaiError(
      "STORE_VERSION",
      `the ${store} store is at schema version ${from}, but this ivoai knows versions up to ${latest}: it was migrated by a newer ivoai; upgrade ivoai (or restore a backup taken before the upgrade)`,
      { data: { store, version: from, supported: latest } },
    );
  for (const row of applied) yield* checkApplied(dialect, store, migrations, row);
  for (const migration of migrations.slice(from)) {
    yield* stepExec(migrationText(migration, dialect));
    yield* stepRun(
      "INSERT INTO schema_migrations (store, version, name, applied_at, checksum) VALUES ($1, $2, $3, $4, $5)",
      [store, migration.version, migration.name, now().toISOString(), migrationChecksum(migration, dialect)],
    );
  }
  return { from, to: Math.max(from, latest) };
}

/** A table an older release created has no checksum column: it gains one in place. */
function* addChecksumColumn(dialect: Dialect): SqlSteps<void> {
  const columns =
    dialect === "sqlite"
      ? yield* stepAll<{ name: string }>("SELECT name FROM pragma_table_info('schema_migrations')")
      : yield* stepAll<{ name: string }>(
          "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'schema_migrations'",
        );
  if (!columns.some((column) => column.name === "checksum"))
    yield* stepExec("ALTER TABLE schema_migrations ADD COLUMN checksum TEXT");
}

/**
 * An applied migration's recorded checksum must be its text's now. A row an older release wrote has none: it is
 * back-filled from this build's text of that version (released texts were frozen before checksums existed).
 */
function* checkApplied(
  dialect: Dialect,
  store: string,
  migrations: readonly Migration[],
  row: AppliedRow,
): SqlSteps<void> {
  const migration = migrations[Number(row.version) - 1];
  if (!migration) return;
  const expected = migrationChecksum(migration, dialect);
  if (row.checksum === null) {
    yield* stepRun("UPDATE schema_migrations SET checksum = $1 WHERE store = $2 AND version = $3", [
      expected,
      store,
      migration.version,
    ]);
    return;
  }
  if (row.checksum === expected) return;
  throw new IvoaiError(
    "STORE_MIGRATION_CHANGED",
    `the ${store} store's migration ${migration.version} ("${row.name}") was applied to this database from a text that differs from the one this ivoai ships (recorded sha256 ${row.checksum.slice(0, 12)}…, now ${expected.slice(0, 12)}…): a released migration was edited. Nothing was changed; run an ivoai release whose migrations match this database. In the source, put migration ${migration.version} back as it was released and make the change a new migration ${migrations.length + 1}`,
    { data: { store, version: migration.version, recorded: row.checksum, expected } },
  );
}

/** A row of schema_migrations as a read-only check sees it (checksum null: written before checksums). */
export interface AppliedMigration {
  version: number;
  checksum: string | null;
}

/** Where a store's database stands against this build's migrations, without changing it. */
export type SchemaStanding =
  | { state: "absent" }
  | { state: "current" | "behind"; version: number; latest: number }
  | { state: "newer"; version: number; latest: number }
  | { state: "edited"; version: number; latest: number; edited: number };

/**
 * What a start would find (the doctor asks without starting): never created, at the latest version, behind
 * (the next start migrates), newer than this build (STORE_VERSION) or with an edited released migration
 * (STORE_MIGRATION_CHANGED). `applied` undefined: no schema_migrations table.
 */
export function schemaStanding(
  migrations: readonly Migration[],
  dialect: Dialect,
  applied: readonly AppliedMigration[] | undefined,
): SchemaStanding {
  if (!applied || applied.length === 0) return { state: "absent" };
  const latest = migrations.length;
  const version = applied.reduce((max, row) => Math.max(max, Number(row.version)), 0);
  if (version > latest) return { state: "newer", version, latest };
  const edited = applied.find((row) => {
    const migration = migrations[Number(row.version) - 1];
    return migration && row.checksum !== null && row.checksum !== migrationChecksum(migration, dialect);
  });
  if (edited) return { state: "edited", version, latest, edited: Number(edited.version) };
  return { state: version < latest ? "behind" : "current", version, latest };
}

/** The applied migrations of `store` in a SQLite file, opened read-only (undefined: never versioned). */
export function readAppliedSqlite(file: string, store: string): AppliedMigration[] | undefined {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    const columns = db.prepare("SELECT name FROM pragma_table_info('schema_migrations')").all() as {
      name: string;
    }[];
    if (columns.length === 0) return undefined;
    const checksum = columns.some((column) => column.name === "checksum") ? "checksum" : "NULL AS checksum";
    return db
      .prepare(`SELECT version, ${checksum} FROM schema_migrations WHERE store = ? ORDER BY version`)
      .all(store) as AppliedMigration[];
  } finally {
    db.close();
  }
}
