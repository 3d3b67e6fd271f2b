// The contract-suite kit: runs one store's behaviours against every backend (SQLite in a temp folder, and
// PostgreSQL in a throwaway database; the suite's global set-up makes sure one answers).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/postgres.js";
import { openPostgresSql } from "./postgres.js";
import type { Dialect, SqlDatabase } from "./sql.js";
import { openSqliteSql } from "./sqlite.js";

export interface BackendKit {
  dialect: Dialect;
  /** A new connection to this backend's test database (schema = one store's schema on PostgreSQL). */
  open(schema: string): Promise<SqlDatabase>;
  /** SQLite only: the file `open(name)` uses, for stores with their own SQLite opener. */
  sqliteFile?(name: string): string;
}

/** `describe` once per backend; each gets a fresh database, shared by the tests inside it. */
export function describeBackends(title: string, body: (kit: BackendKit) => void): void {
  describe(`${title} [sqlite]`, () => {
    let dir = "";
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), "ivoai-store-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    body({
      dialect: "sqlite",
      open: async (schema) => openSqliteSql(path.join(dir, `${schema}.sqlite`)),
      sqliteFile: (name) => path.join(dir, `${name}.sqlite`),
    });
  });
  describe(`${title} [postgres]`, () => {
    let database: ThrowawayDatabase | undefined;
    beforeAll(async () => {
      database = await createThrowawayDatabase();
    });
    afterAll(async () => database?.drop());
    body({
      dialect: "postgres",
      open: async (schema) => {
        if (!database) throw new Error("no test database");
        return openPostgresSql({ url: database.url, schema });
      },
    });
  });
}
