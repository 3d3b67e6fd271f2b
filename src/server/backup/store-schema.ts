// What a backed-up store may hold in sqlite_schema: only the tables and indexes a freshly created store of this
// build has. Triggers, views, virtual tables and unknown objects are refused before anything is written.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openSqlite, type SqliteDatabase } from "../../shared/native-sqlite.js";
import type { BackupStores, StoreKind } from "./manifest.js";

interface SchemaRow {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

interface KnownSchema {
  rows: Map<string, SchemaRow>;
  /** Column names of each known table. */
  columns: Map<string, Set<string>>;
}

const known = new Map<StoreKind, KnownSchema>();

const normalise = (sql: string | null) => (sql === null ? null : sql.replace(/\s+/g, ""));
const key = (row: { type: string; name: string }) => `${row.type} ${row.name}`;

function readSchema(db: SqliteDatabase, schema: string): SchemaRow[] {
  return db
    .prepare(`SELECT type, name, tbl_name, sql FROM "${schema}".sqlite_schema ORDER BY type, name`)
    .all() as SchemaRow[];
}

function tableColumns(db: SqliteDatabase, schema: string, table: string) {
  return db.prepare(`SELECT name, hidden FROM pragma_table_xinfo(?, ?)`).all(table, schema) as {
    name: string;
    hidden: number;
  }[];
}

/** The schema of a store freshly created by the store's own preparation (computed once per process). */
export function knownSchema(kind: StoreKind, stores: BackupStores): KnownSchema {
  const cached = known.get(kind);
  if (cached) return cached;
  const dir = mkdtempSync(path.join(tmpdir(), "ivoai-schema-"));
  try {
    const file = path.join(dir, `${kind}.sqlite`);
    stores[kind](file);
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    try {
      const rows = readSchema(db, "main");
      const result: KnownSchema = {
        rows: new Map(rows.map((row) => [key(row), row])),
        columns: new Map(
          rows
            .filter((row) => row.type === "table")
            .map((row) => [row.name, new Set(tableColumns(db, "main", row.name).map((c) => c.name))]),
        ),
      };
      known.set(kind, result);
      return result;
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What in the store file's schema this build does not create, empty when nothing. A table may lack columns a
 * later migration added (an older store), but never has columns, a type or a form (virtual) of its own; an index
 * must be exactly the known one.
 */
export function schemaProblems(kind: StoreKind, file: string, stores: BackupStores): string[] {
  const allowed = knownSchema(kind, stores);
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  const problems: string[] = [];
  try {
    db.pragma("trusted_schema = OFF");
    for (const row of readSchema(db, "main")) {
      const expected = allowed.rows.get(key(row));
      const what = `${row.type} ${JSON.stringify(row.name)}`;
      if (!expected || expected.tbl_name !== row.tbl_name) {
        problems.push(`unknown ${what}`);
        continue;
      }
      if (row.type === "index" && normalise(row.sql) !== normalise(expected.sql)) {
        problems.push(`${what} differs from the one ivoai creates`);
      }
      if (row.type === "table" && row.sql !== null) {
        if (!/^CREATE TABLE /i.test(row.sql)) problems.push(`${what} is not a plain table`);
        const columns = allowed.columns.get(row.name) ?? new Set<string>();
        for (const column of tableColumns(db, "main", row.name)) {
          if (column.hidden !== 0) problems.push(`${what} has a generated or hidden column ${column.name}`);
          else if (!columns.has(column.name)) problems.push(`${what} has an unknown column ${column.name}`);
        }
      }
    }
  } finally {
    db.close();
  }
  return problems.slice(0, 5);
}
