// Every store that runs on PostgreSQL, with its migrations: what `ivoai server store show|migrate` lists and copies.
import { existsSync } from "node:fs";
import type { ServerPaths } from "../../config/server-paths.js";
import { AUDIT_MIGRATIONS } from "../audit/store.js";
import { CONSOLE_MIGRATIONS } from "../console/store.js";
import { openSqliteCatalogue } from "../context/catalogue.js";
import { CATALOGUE_POSTGRES_MIGRATIONS } from "../context/catalogue-postgres.js";
import { ENROLLMENT_MIGRATIONS, openEnrollmentStore } from "../enrollment/store.js";
import { MEMORY_MIGRATIONS, prepareMemoryFile } from "../memory/schema.js";
import { adoptUnversionedSqlite, OAUTH_MIGRATIONS } from "../oauth/store-schema.js";
import { type StoreDomain, sqliteFileOf } from "./backend.js";
import type { Migration } from "./migrations.js";
import { openSqliteSql } from "./sqlite.js";

export interface RegisteredStore {
  domain: StoreDomain;
  migrations: readonly Migration[];
  /** Brings the SQLite store up to date before it is copied (older files, data from before the SQL stores). */
  prepareSqlite?(paths: ServerPaths): Promise<void>;
}

export const SQL_STORES: readonly RegisteredStore[] = [
  {
    domain: "enrollment",
    migrations: ENROLLMENT_MIGRATIONS,
    // A tree from before the SQL stores keeps its state in state.json: imported into SQLite first.
    async prepareSqlite(paths) {
      if (!existsSync(sqliteFileOf(paths, "enrollment")) && !existsSync(paths.enrollmentState)) return;
      const store = await openEnrollmentStore({
        db: openSqliteSql(sqliteFileOf(paths, "enrollment")),
        legacyStatePath: paths.enrollmentState,
      });
      await store.close();
    },
  },
  {
    domain: "oauth",
    migrations: OAUTH_MIGRATIONS,
    async prepareSqlite(paths) {
      if (!existsSync(sqliteFileOf(paths, "oauth"))) return;
      const db = openSqliteSql(sqliteFileOf(paths, "oauth"));
      try {
        await adoptUnversionedSqlite(db);
      } finally {
        await db.close();
      }
    },
  },
  { domain: "audit", migrations: AUDIT_MIGRATIONS },
  { domain: "console", migrations: CONSOLE_MIGRATIONS },
  {
    domain: "context",
    migrations: CATALOGUE_POSTGRES_MIGRATIONS,
    async prepareSqlite(paths) {
      if (existsSync(sqliteFileOf(paths, "context")))
        await openSqliteCatalogue(sqliteFileOf(paths, "context")).close();
    },
  },
  {
    domain: "memory",
    migrations: MEMORY_MIGRATIONS,
    // A first-release file gains its events' public ids, and the meta rows, before the copy.
    async prepareSqlite(paths) {
      if (existsSync(sqliteFileOf(paths, "memory"))) prepareMemoryFile(sqliteFileOf(paths, "memory"));
    },
  },
];
