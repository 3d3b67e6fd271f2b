// SQLite for backup and restore: consistent online copies of live WAL stores, integrity checks, schema versions,
// and a probe that tells whether another process (a running server) has a store open.
import { promises as fs } from "node:fs";
import { IvoaiError } from "../../shared/errors.js";
import { openSqlite, type SqliteDatabase } from "../../shared/native-sqlite.js";

/**
 * Copies a live store with SQLite's online backup API (never a raw copy of a WAL database). After the first
 * step the rest goes in one step, i.e. inside one read transaction: writers in another process cannot make the
 * backup restart forever, and the copy is one consistent snapshot. The copy is left in rollback-journal mode,
 * a single self-contained file, mode 0600.
 */
export async function snapshotStore(
  source: string,
  dest: string,
  onProgress?: (done: number, total: number) => void,
): Promise<void> {
  const db = openSqlite(source, { readonly: true, fileMustExist: true, timeout: 10_000 });
  try {
    await db.backup(dest, {
      progress: ({ totalPages, remainingPages }) => {
        onProgress?.(totalPages - remainingPages, totalPages);
        return 1 << 30;
      },
    });
  } finally {
    db.close();
  }
  const copy = openSqlite(dest, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
  await fs.chmod(dest, 0o600);
}

/** The `meta.schema` version of a store file (opened read-only). */
export function storeFacts(file: string): { schema: number; generation: number } {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    const value = (key: string) =>
      Number(
        (db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value,
      );
    return { schema: value("schema"), generation: value("generation") };
  } catch (error) {
    throw new IvoaiError("STATE_CORRUPT", `invalid backup: ${file} is not an ivoai store`, { cause: error });
  } finally {
    db.close();
  }
}

/** `PRAGMA integrity_check` on a file opened read-only; the problems found, empty when sound. */
export function integrityProblems(file: string): string[] {
  let db: SqliteDatabase;
  try {
    db = openSqlite(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    return [`cannot open: ${(error as Error).message}`];
  }
  try {
    const rows = db.pragma("integrity_check") as { integrity_check: string }[];
    const problems = rows.map((row) => row.integrity_check).filter((text) => text !== "ok");
    return problems.slice(0, 5);
  } catch (error) {
    return [(error as Error).message];
  } finally {
    db.close();
  }
}

/**
 * True when another process has the store open. A WAL connection keeps a shared lock on the database file for
 * its whole life; a connection in exclusive locking mode cannot start a transaction beside it.
 */
export function storeInUse(file: string): boolean {
  const db = openSqlite(file, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("ROLLBACK");
    return false;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return true;
    throw error;
  } finally {
    db.close();
  }
}
