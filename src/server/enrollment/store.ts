// The enrollment store: codes and client credentials (hashes only) as one versioned document in SQL, on SQLite or
// PostgreSQL. Every read checks the version (one cheap query), so a revocation made by any process or replica is
// seen by the very next request; mutations run in a transaction that locks the document row.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { resolveStoreBackend, sqliteFileOf } from "../store/backend.js";
import { type Migration, migrate } from "../store/migrations.js";
import { forUpdate, type SqlDatabase } from "../store/sql.js";
import { type EnrollmentState, emptyEnrollmentState, enrollmentStateSchema } from "./state.js";

export interface EnrollmentStore {
  /** The current state; the same object until someone changes it (one version query per call). */
  read(): Promise<EnrollmentState>;
  /** Runs `change` on the freshest state inside a transaction holding the document's row lock, and persists it. */
  mutate<T>(change: (state: EnrollmentState) => { state: EnrollmentState; result: T }): Promise<T>;
  /** Closes the store's database connection. */
  close(): Promise<void>;
}

export interface EnrollmentStoreOptions {
  /** The store's database (its own connection: close() closes it). */
  db: SqlDatabase;
  /**
   * A state.json of the file-based store (ivoai before the SQL stores): imported once, when the store has never
   * been initialised, then renamed to `state.json.imported`.
   */
  legacyStatePath?: string;
  now?: () => Date;
}

export const ENROLLMENT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "enrollment state document",
    // One row (id 1): the state as JSON, its version (bumped by every change), and the hash of the state.json it
    // was imported from, so a crash between the import and the rename finishes the rename on the next open.
    up: `CREATE TABLE enrollment_state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      version INTEGER NOT NULL,
      doc TEXT NOT NULL,
      imported_sha256 TEXT,
      updated_at TEXT NOT NULL
    )`,
  },
];

/** Opens the enrollment store on `db`: migrates it, and imports a legacy state.json into a store never used. */
export async function openEnrollmentStore(options: EnrollmentStoreOptions): Promise<EnrollmentStore> {
  const { db } = options;
  const now = options.now ?? (() => new Date());
  try {
    await migrate(db, "enrollment", ENROLLMENT_MIGRATIONS, now);
    await initialise(db, options.legacyStatePath, now);
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  let cache: { version: number; state: EnrollmentState } | undefined;

  return {
    async read() {
      // The document travels only when its version moved since the cached one.
      const row = await db.get<{ version: number; doc: string | null }>(
        "SELECT version, CASE WHEN version = $1 THEN NULL ELSE doc END AS doc FROM enrollment_state WHERE id = 1",
        [cache?.version ?? -1],
      );
      if (!row) throw missingDocument();
      if (cache && row.doc === null && cache.version === row.version) return cache.state;
      const state = parseState(row.doc ?? "");
      cache = { version: row.version, state };
      return state;
    },
    mutate(change) {
      return db.transaction(async (tx) => {
        const row = await tx.get<{ version: number; doc: string }>(
          `SELECT version, doc FROM enrollment_state WHERE id = 1${forUpdate(tx.dialect)}`,
        );
        if (!row) throw missingDocument();
        const { state, result } = change(parseState(row.doc));
        const doc = JSON.stringify(state);
        // A change that changed nothing (a refused exchange) keeps the version, and every reader's cache.
        if (doc !== row.doc)
          await tx.run("UPDATE enrollment_state SET version = $1, doc = $2, updated_at = $3 WHERE id = 1", [
            row.version + 1,
            doc,
            now().toISOString(),
          ]);
        return result;
      });
    },
    close: () => db.close(),
  };
}

/** The server tree's enrollment store, on the backend server.toml names. */
export async function openServerEnrollmentStore(paths: ServerPaths): Promise<EnrollmentStore> {
  const backend = await resolveStoreBackend(paths);
  if (backend.kind === "sqlite") {
    // Created owner-only before SQLite creates it (its -wal and -shm files take the same mode).
    await (await fs.open(sqliteFileOf(paths, "enrollment"), "a", 0o600)).close();
  }
  return openEnrollmentStore({
    db: await backend.open("enrollment"),
    legacyStatePath: paths.enrollmentState,
  });
}

/** Creates the document row once: the legacy state.json's state when there is one, else the empty state. */
async function initialise(db: SqlDatabase, legacyPath: string | undefined, now: () => Date): Promise<void> {
  const legacy = legacyPath ? await readLegacy(legacyPath) : undefined;
  const select = "SELECT imported_sha256 FROM enrollment_state WHERE id = 1";
  // Every open but the first finds the row without taking a lock.
  const row =
    (await db.get<{ imported_sha256: string | null }>(select)) ??
    (await db.transaction(async (tx) => {
      const existing = await tx.get<{ imported_sha256: string | null }>(`${select}${forUpdate(tx.dialect)}`);
      if (existing) return existing;
      const state = legacy ? parseState(legacy.text, legacyPath) : emptyEnrollmentState();
      // Replicas opening a new PostgreSQL store at once: the first insert wins, the others change nothing and
      // read the winner's row (each statement sees what committed before it).
      await tx.run(
        `INSERT INTO enrollment_state (id, version, doc, imported_sha256, updated_at) VALUES (1, 1, $1, $2, $3)
       ON CONFLICT (id) DO NOTHING`,
        [JSON.stringify(state), legacy?.sha256 ?? null, now().toISOString()],
      );
      const inserted = await tx.get<{ imported_sha256: string | null }>(select);
      if (!inserted) throw missingDocument();
      return inserted;
    }));
  // Renamed only once it is in the store (this open, or an earlier one that crashed before the rename); a
  // state.json the store did not import (another tree's store came first) stays where it is.
  if (legacy && legacyPath && row.imported_sha256 === legacy.sha256) {
    // Two gateways of one tree opening together both get here: the second finds it renamed already.
    await fs.rename(legacyPath, `${legacyPath}.imported`).catch((error: unknown) => {
      if (errnoCode(error) !== "ENOENT") throw error;
    });
  }
}

async function readLegacy(file: string): Promise<{ text: string; sha256: string } | undefined> {
  try {
    const text = await fs.readFile(file, "utf8");
    return { text, sha256: createHash("sha256").update(text).digest("hex") };
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

function parseState(text: string, file?: string): EnrollmentState {
  const where = file ?? "the enrollment store";
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new IvoaiError("STATE_CORRUPT", `${where} is not valid JSON; restore it from a backup`);
  }
  const parsed = enrollmentStateSchema.safeParse(raw);
  if (!parsed.success)
    throw new IvoaiError("STATE_CORRUPT", `${where} does not match the enrollment state schema`);
  return parsed.data;
}

function missingDocument(): IvoaiError {
  return new IvoaiError(
    "STATE_CORRUPT",
    "the enrollment store has no state document (its table was emptied); restore it from a backup",
  );
}
