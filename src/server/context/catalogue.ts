// The context catalogue: connector registry, normalised documents and their chunks. One implementation on the
// shared SQL layer (catalogue-store.ts); this file opens it over the server's SQLite file (WAL).

import type { SqlDatabase } from "../store/sql.js";
import { openSqliteSql } from "../store/sqlite.js";
import type { Catalogue } from "./catalogue-model.js";
import { openCatalogueStore } from "./catalogue-store.js";

export * from "./catalogue-model.js";
export { CATALOGUE_MIGRATIONS, CATALOGUE_SCHEMA, prepareCatalogueFile } from "./catalogue-schema.js";
export { openCatalogueStore } from "./catalogue-store.js";

/** A SQLite catalogue, usable at once: its calls wait for the open (and migration) to finish. */
export interface SqliteCatalogue extends Catalogue {
  /** Settles when the file is open and migrated; rejects with the open's error (e.g. a newer schema). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** The catalogue's methods, each waiting for the open; the compiler checks the list is complete. */
const METHODS = [
  "addConnector",
  "getConnector",
  "listConnectors",
  "deleteConnector",
  "markIngested",
  "recordIngestSummary",
  "documentFingerprints",
  "documentStates",
  "recordSourceStats",
  "replaceDocuments",
  "removeDocuments",
  "getDocument",
  "getDocumentByPath",
  "listDocuments",
  "completePaths",
  "recentDocuments",
  "documentsByIds",
  "chunksBySeq",
  "chunkTermsAfter",
  "chunkTextsAfter",
  "languages",
  "removedSince",
  "generation",
  "instance",
  "chunkCount",
  "stats",
] as const satisfies readonly (keyof Catalogue)[];
type Method = (typeof METHODS)[number];
// Fails to compile when Catalogue gains a method missing above.
const complete: Exclude<
  keyof Catalogue,
  Method | "close" | "vectorStore" | "corpusModels" | "changes"
> extends never
  ? true
  : false = true;
void complete;

/** Per-connection tuning of the catalogue's file: larger cache, temporary tables in memory, fewer checkpoints. */
async function tuneConnection(db: SqlDatabase): Promise<void> {
  await db.exec("PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY;");
  const pageSize = Number((await db.get<{ page_size: number }>("PRAGMA page_size"))?.page_size ?? 4096);
  // A checkpoint every 64 MiB of log, whatever the page size.
  await db.exec(`PRAGMA wal_autocheckpoint = ${Math.ceil((64 * 1024 ** 2) / pageSize)}`);
}

/**
 * The catalogue in the SQLite `file`, created or migrated as needed. Returned at once (its first calls wait for
 * the open); await `ready` to learn of an open that failed, which every call would otherwise report.
 */
export function openSqliteCatalogue(file: string): SqliteCatalogue {
  // 16 KiB pages for a new catalogue (no effect on an existing one): chunk rows of 2-3 KB fill them well, where
  // 4 KiB pages left a third empty, and ingest writes and checkpoints fewer pages.
  const db = openSqliteSql(file, { busyTimeoutMs: 10_000, pragmas: ["page_size = 16384"] });
  const opening = (async () => {
    try {
      await tuneConnection(db);
      return await openCatalogueStore(db);
    } catch (error) {
      await db.close();
      throw error;
    }
  })();
  const ready = opening.then(() => undefined);
  // Reported by `ready` and by every call; not an unhandled rejection meanwhile.
  ready.catch(() => {});
  const catalogue: Record<string, unknown> = {
    ready,
    async close() {
      const open = await opening.catch(() => undefined);
      await open?.close();
    },
  };
  for (const method of METHODS)
    catalogue[method] = async (...args: unknown[]) =>
      ((await opening)[method] as (...args: unknown[]) => unknown)(...args);
  return catalogue as unknown as SqliteCatalogue;
}
