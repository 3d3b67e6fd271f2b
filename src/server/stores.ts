// The server's SQL stores, with their migrations: the composition root's list, handed to `ivoai server store
// show|migrate`, to the doctor, to backup and to whatever else walks every store. It lives here, not in store/, so that the
// SQL layer imports no domain (each domain imports the layer).
import { existsSync } from "node:fs";
import type { ServerPaths } from "../config/server-paths.js";
import { AUDIT_MIGRATIONS } from "./audit/store.js";
import type { BackupStores } from "./backup/index.js";
import { CONSOLE_MIGRATIONS } from "./console/store.js";
import { CATALOGUE_MIGRATIONS, prepareCatalogueFile } from "./context/catalogue.js";
import { ENROLLMENT_MIGRATIONS, openEnrollmentStore } from "./enrollment/store.js";
import { MEMORY_MIGRATIONS, prepareMemoryFile } from "./memory/schema.js";
import { adoptUnversionedSqlite, OAUTH_MIGRATIONS } from "./oauth/store-schema.js";
import { type StoreDomain, sqliteFileOf } from "./store/backend.js";
import type { Migration } from "./store/migrations.js";
import { openSqliteSql } from "./store/sqlite.js";

/** One SQL store as the tools that walk every store see it. */
export interface RegisteredStore {
  domain: StoreDomain;
  migrations: readonly Migration[];
  /** Brings the SQLite store up to date before it is copied (older files, data from before the SQL stores). */
  prepareSqlite?(paths: ServerPaths): Promise<void>;
}

/** Every SQL store, in the order `store show` lists and `store migrate` copies them. */
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
    migrations: CATALOGUE_MIGRATIONS,
    async prepareSqlite(paths) {
      if (existsSync(sqliteFileOf(paths, "context"))) prepareCatalogueFile(sqliteFileOf(paths, "context"));
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

/** The stores a backup carries, each with the synchronous preparation of its SQLite file (restore, verify). */
export const BACKUP_STORES: BackupStores = { catalogue: prepareCatalogueFile, memory: prepareMemoryFile };
