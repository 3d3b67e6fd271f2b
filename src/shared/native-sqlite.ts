// The one place ivoai opens SQLite: better-sqlite3 loads its native addon on the first `new Database`,
// and an addon built for another Node.js ABI (or never built) must say what to run, not "unexpected error".
import { createRequire } from "node:module";
import path from "node:path";
import Database from "better-sqlite3";
import { IvoaiError } from "./errors.js";

export type SqliteDatabase = Database.Database;
export type SqliteOptions = Database.Options;

/** Opens (or creates) a database, turning a native-module load failure into one actionable IvoaiError. */
export function openSqlite(file: string, options?: SqliteOptions): SqliteDatabase {
  try {
    return new Database(file, options);
  } catch (error) {
    throw nativeSqliteError(error) ?? error;
  }
}

export type NativeSqliteHealth =
  | { healthy: true; version: string; path: string }
  | { healthy: false; message: string; path: string };

/** Loads the addon once (an in-memory database) and says whether it works on this Node.js. */
export function checkNativeSqlite(): NativeSqliteHealth {
  const where = packageRoot() ?? "better-sqlite3";
  try {
    const db = new Database(":memory:");
    try {
      const row = db.prepare("select sqlite_version() as version").get() as { version: string };
      return { healthy: true, version: row.version, path: where };
    } finally {
      db.close();
    }
  } catch (error) {
    const mapped = nativeSqliteError(error);
    return { healthy: false, message: (mapped ?? (error as Error)).message, path: where };
  }
}

/**
 * The IvoaiError for an addon that cannot load, or undefined when `error` is something else (a
 * missing file, a busy database…). Node says "NODE_MODULE_VERSION 115. This version of Node.js
 * requires NODE_MODULE_VERSION 127" for an ABI mismatch; `bindings` says "Could not locate the
 * bindings file" when the install script never ran.
 */
export function nativeSqliteError(error: unknown): IvoaiError | undefined {
  if (!(error instanceof Error)) return undefined;
  const message = error.message;
  const code = (error as { code?: unknown }).code;
  const fix = rebuildAdvice();
  const abi = /NODE_MODULE_VERSION (\d+)\.[\s\S]*?requires\s+NODE_MODULE_VERSION (\d+)/.exec(message);
  if (abi) {
    return new IvoaiError(
      "NATIVE_MODULE",
      `the native SQLite module was built for Node.js ABI ${abi[1]} but this is Node.js ${process.version} (ABI ${process.versions.modules}): ${fix}`,
      { cause: error, data: { built_abi: Number(abi[1]), node_abi: Number(process.versions.modules) } },
    );
  }
  if (/Could not locate the bindings file/.test(message)) {
    return new IvoaiError(
      "NATIVE_MODULE",
      `the native SQLite module was never built (its install script did not run): ${fix}`,
      { cause: error },
    );
  }
  if (code === "ERR_DLOPEN_FAILED") {
    const first = message.split("\n")[0] ?? "";
    return new IvoaiError("NATIVE_MODULE", `the native SQLite module cannot be loaded (${first}): ${fix}`, {
      cause: error,
    });
  }
  return undefined;
}

function rebuildAdvice(): string {
  const root = packageRoot();
  // Rebuilding inside the folder that holds better-sqlite3 works for a global install (any prefix) and a
  // checkout alike; `npm rebuild -g ivoai` would not, since npm rebuilds only the named package.
  return root
    ? `run "npm rebuild better-sqlite3" in ${root} (or reinstall ivoai with this Node.js)`
    : `run "npm rebuild better-sqlite3" where ivoai is installed (or reinstall ivoai with this Node.js)`;
}

/** The folder whose node_modules holds better-sqlite3: the installed ivoai package or the checkout. */
function packageRoot(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve("better-sqlite3");
    const marker = `${path.sep}node_modules${path.sep}better-sqlite3${path.sep}`;
    const at = entry.lastIndexOf(marker);
    return at > 0 ? entry.slice(0, at) : undefined;
  } catch {
    return undefined;
  }
}

/** `?,?,?` for an IN list of `values`. */
export const inList = (values: readonly unknown[]) => values.map(() => "?").join(",");

/**
 * Statements whose text varies with an IN list's length, prepared once per text (preparing costs 0.1–0.5 ms, a
 * large part of a query that reads a few rows). At most `max` are kept; beyond, they are prepared each time.
 */
export function statementCache(db: SqliteDatabase, max = 500): (sql: string) => Database.Statement {
  const statements = new Map<string, Database.Statement>();
  return (sql) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size < max) statements.set(sql, statement);
    }
    return statement;
  };
}
