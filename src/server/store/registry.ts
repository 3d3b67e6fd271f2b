// Every store that runs on the SQL layer, with its migrations: what `ivoai server store migrate` copies.
import { openSqliteCatalogue } from "../context/catalogue.js";
import { CATALOGUE_POSTGRES_MIGRATIONS } from "../context/catalogue-postgres.js";
import type { StoreDomain } from "./backend.js";
import type { Migration } from "./migrations.js";

export interface RegisteredStore {
  domain: StoreDomain;
  migrations: readonly Migration[];
  /** Brings an existing SQLite file up to date before it is copied (stores with their own SQLite opener). */
  prepareSqlite?(file: string): void;
}

export const SQL_STORES: readonly RegisteredStore[] = [
  {
    domain: "context",
    migrations: CATALOGUE_POSTGRES_MIGRATIONS,
    prepareSqlite: (file) => void openSqliteCatalogue(file).close(),
  },
];
