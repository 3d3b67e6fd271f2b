// The SQL interface over one SQLite file (better-sqlite3, WAL). Calls are synchronous underneath; a transaction
// holds the connection, so other calls of this process wait for it rather than run inside it.
import path from "node:path";
import type { SqliteDatabase } from "../../shared/native-sqlite.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { refuseNul, type SqlDatabase, type SqlExecutor, toPositional } from "./sql.js";

export interface SqliteSqlOptions {
  /** Milliseconds to wait for another process's write lock (default 5000). */
  busyTimeoutMs?: number;
  /** Pragmas run when this process opens the file, before WAL mode (e.g. page_size, which only a new file takes). */
  pragmas?: readonly string[];
}

/** Open files of this process: one connection each, shared by every opener (see openSqliteSql). */
const shared = new Map<string, { db: SqlDatabase; users: number }>();

/**
 * The SQL interface over `file`. Openers of one file in one process share its connection, so that their
 * transactions queue in the process; a second connection would wait for the first one's lock synchronously,
 * blocking the very event loop that must finish the first transaction. Processes wait for each other's write
 * lock up to `busyTimeoutMs`.
 */
export function openSqliteSql(file: string, options: SqliteSqlOptions = {}): SqlDatabase {
  const key = path.resolve(file);
  let entry = shared.get(key);
  if (!entry) {
    const db = openSqlite(key);
    for (const pragma of options.pragmas ?? []) db.pragma(pragma);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma("foreign_keys = ON");
    entry = { db: wrapSqlite(db), users: 0 };
    shared.set(key, entry);
  }
  entry.users += 1;
  const { db } = entry;
  let closed = false;
  return {
    ...db,
    async close() {
      if (closed) return;
      closed = true;
      const current = shared.get(key);
      if (!current) return;
      current.users -= 1;
      if (current.users === 0) {
        shared.delete(key);
        await current.db.close();
      }
    },
  };
}

/** The SQL interface over an open connection (which it closes on close()). */
export function wrapSqlite(db: SqliteDatabase): SqlDatabase {
  const statements = new Map<string, ReturnType<SqliteDatabase["prepare"]>>();
  const prepare = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size > 500) statements.clear();
      statements.set(sql, statement);
    }
    return statement;
  };
  const direct: SqlExecutor = {
    dialect: "sqlite",
    async all<T>(sql: string, params: readonly unknown[] = []) {
      refuseNul(params);
      const positional = toPositional(sql, params);
      return prepare(positional.sql).all(positional.params) as T[];
    },
    async get<T>(sql: string, params: readonly unknown[] = []) {
      refuseNul(params);
      const positional = toPositional(sql, params);
      return prepare(positional.sql).get(positional.params) as T | undefined;
    },
    async run(sql: string, params: readonly unknown[] = []) {
      refuseNul(params);
      const positional = toPositional(sql, params);
      return { changes: prepare(positional.sql).run(positional.params).changes };
    },
    async exec(script: string) {
      db.exec(script);
    },
  };
  // The transaction in progress, if any: calls from outside it wait until it ends.
  let current: Promise<unknown> = Promise.resolve();
  let open = false;
  const outside = async <T>(call: () => Promise<T>): Promise<T> => {
    while (open) await current.catch(() => {});
    return call();
  };
  return {
    dialect: "sqlite",
    all: (sql, params) => outside(() => direct.all(sql, params)),
    get: (sql, params) => outside(() => direct.get(sql, params)),
    run: (sql, params) => outside(() => direct.run(sql, params)),
    exec: (script) => outside(() => direct.exec(script)),
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      while (open) await current.catch(() => {});
      open = true;
      const done = (async () => {
        db.exec("BEGIN IMMEDIATE");
        try {
          const result = await work(direct);
          db.exec("COMMIT");
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw error;
        }
      })();
      current = done;
      try {
        return await done;
      } finally {
        open = false;
      }
    },
    async close() {
      while (open) await current.catch(() => {});
      db.close();
    },
  };
}
