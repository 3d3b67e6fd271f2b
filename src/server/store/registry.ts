// Every store that runs on the SQL layer, with its migrations: what `ivoai server store migrate` copies.
import type { StoreDomain } from "./backend.js";
import type { Migration } from "./migrations.js";

export interface RegisteredStore {
  domain: StoreDomain;
  migrations: readonly Migration[];
}

export const SQL_STORES: readonly RegisteredStore[] = [];
