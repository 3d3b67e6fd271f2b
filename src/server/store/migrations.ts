// Versioned, ordered schema migrations per store, on either backend. Each store keeps the versions it applied in
// its own `schema_migrations` table; a start applies what is missing in one transaction, and refuses
// a database that a newer ivoai has migrated further than this one knows.
import { IvoaiError } from "../../shared/errors.js";
import type { Dialect, SqlDatabase } from "./sql.js";

export interface Migration {
  /** 1, 2, 3…: contiguous and never reused once released. */
  version: number;
  name: string;
  /** The DDL, the same on both backends or one text per backend. */
  up: string | Record<Dialect, string>;
}

export interface MigrationResult {
  from: number;
  to: number;
}

const TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  store TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL,
  PRIMARY KEY (store, version)
)`;

/** Applies the missing migrations of `store`; several processes may run this at once (one does the work). */
export async function migrate(
  db: SqlDatabase,
  store: string,
  migrations: readonly Migration[],
  now: () => Date = () => new Date(),
): Promise<MigrationResult> {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new Error(`${store} migrations must be numbered 1, 2, 3…`);
  });
  const latest = migrations.length;
  return db.transaction(async (tx) => {
    // Replicas starting together: the first migrates, the others wait here and find nothing left to do.
    if (tx.dialect === "postgres")
      await tx.run("SELECT pg_advisory_xact_lock(hashtext($1))", [`ivoai:${store}`]);
    await tx.exec(TABLE);
    const row = await tx.get<{ version: number | null }>(
      "SELECT MAX(version) AS version FROM schema_migrations WHERE store = $1",
      [store],
    );
    const from = Number(row?.version ?? 0);
    if (from > latest)
      throw new IvoaiError(
        "STORE_VERSION",
        `the ${store} store is at schema version ${from}, but this ivoai knows versions up to ${latest}: it was migrated by a newer ivoai; upgrade ivoai (or restore a backup taken before the upgrade)`,
        { data: { store, version: from, supported: latest } },
      );
    for (const migration of migrations.slice(from)) {
      await tx.exec(typeof migration.up === "string" ? migration.up : migration.up[tx.dialect]);
      await tx.run(
        "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ($1, $2, $3, $4)",
        [store, migration.version, migration.name, now().toISOString()],
      );
    }
    return { from, to: Math.max(from, latest) };
  });
}
