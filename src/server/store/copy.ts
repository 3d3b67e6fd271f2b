// Copies one store's tables from SQLite into PostgreSQL (`ivoai server store migrate --to postgres`), and proves
// the copy: both sides are migrated to the same schema first, then every table is copied unless the target
// already holds exactly the same rows (idempotent), and row counts and an order-independent checksum of the
// rows must agree afterwards. A target that holds other rows is refused rather than overwritten.
import { createHash } from "node:crypto";
import { IvoaiError } from "../../shared/errors.js";
import { type Migration, migrate } from "./migrations.js";
import type { SqlDatabase, SqlExecutor } from "./sql.js";

export interface TableCopy {
  table: string;
  rows: number;
  /** "copied" now, "unchanged" (the target already held these rows), or "empty". */
  action: "copied" | "unchanged" | "empty";
  checksum: string;
}

const BATCH_ROWS = 500;
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** Our own bookkeeping (each side keeps its own) and caches the target rebuilds (memory's page vectors). */
const SKIPPED = new Set(["schema_migrations", "page_vectors"]);

export interface CopyOptions {
  /** Replace target tables that hold other rows (e.g. a retried copy after the target was written to). */
  force?: boolean;
  onTable?: (table: string, done: number, total: number) => void;
}

export async function copyStore(
  store: string,
  migrations: readonly Migration[],
  source: SqlDatabase,
  target: SqlDatabase,
  options: CopyOptions = {},
): Promise<TableCopy[]> {
  if (source.dialect !== "sqlite" || target.dialect !== "postgres")
    throw new Error("copyStore copies from SQLite to PostgreSQL");
  await migrate(source, store, migrations);
  await migrate(target, store, migrations);
  const tables = (
    await source.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
  )
    .map((row) => row.name)
    .filter((name) => !SKIPPED.has(name));
  const targetTables = new Set(
    (
      await target.all<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
      )
    ).map((row) => row.table_name),
  );
  const results: TableCopy[] = [];
  for (const table of tables) {
    // Names go into statements: only plain identifiers, and only tables the migrations made on both sides.
    if (!IDENTIFIER.test(table) || !targetTables.has(table))
      throw new IvoaiError(
        "STATE_CORRUPT",
        `the SQLite ${store} store holds a table ${JSON.stringify(table)} that its migrations do not create: nothing was copied from it; inspect the file`,
      );
    const columns = (
      await source.all<{ name: string }>("SELECT name FROM pragma_table_info($1)", [table])
    ).map((row) => row.name);
    const targetColumns = new Set(
      (
        await target.all<{ column_name: string }>(
          "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1",
          [table],
        )
      ).map((row) => row.column_name),
    );
    const stray = columns.find((column) => !IDENTIFIER.test(column) || !targetColumns.has(column));
    if (stray !== undefined)
      throw new IvoaiError(
        "STATE_CORRUPT",
        `the SQLite ${store} store's table ${table} has a column ${JSON.stringify(stray)} that PostgreSQL's does not: nothing was copied from it`,
      );
    const before = await tableDigest(source, table, columns);
    const existing = await tableDigest(target, table, columns);
    if (before.rows === 0 && existing.rows === 0) {
      results.push({ table, rows: 0, action: "empty", checksum: before.checksum });
      continue;
    }
    if (existing.rows === before.rows && existing.checksum === before.checksum) {
      results.push({ table, rows: before.rows, action: "unchanged", checksum: before.checksum });
      continue;
    }
    if (existing.rows > 0 && !options.force)
      throw new IvoaiError(
        "CONFLICT",
        `the PostgreSQL ${store} store's table ${table} already holds other rows (${existing.rows}, the SQLite one ${before.rows}): it was written to after a copy; pass --force to replace it with the SQLite data`,
        { data: { store, table } },
      );
    // SQLite's AUTOINCREMENT high-water mark: ids of deleted rows are never handed out again (tombstones
    // and audit cursors rely on it), so PostgreSQL's sequence continues after it, not after the highest row.
    const used = (await source.get<{ n: number }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'",
    ))
      ? Number(
          (await source.get<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = $1", [table]))
            ?.seq ?? 0,
        )
      : 0;
    await target.transaction(async (tx) => {
      await tx.run(`DELETE FROM ${table}`);
      await copyRows(source, tx, table, columns, before.rows, options.onTable);
      await bumpSequences(tx, table, used);
    });
    const after = await tableDigest(target, table, columns);
    if (after.rows !== before.rows || after.checksum !== before.checksum)
      throw new IvoaiError(
        "STORE",
        `the copy of ${store}.${table} does not match its source (${after.rows} rows vs ${before.rows}): run the migrate again (it replaces this table with --force); the SQLite file is untouched`,
      );
    results.push({ table, rows: before.rows, action: "copied", checksum: before.checksum });
  }
  return results;
}

async function copyRows(
  source: SqlDatabase,
  tx: SqlExecutor,
  table: string,
  columns: readonly string[],
  total: number,
  onTable: CopyOptions["onTable"],
): Promise<void> {
  const list = columns.map((column) => `"${column}"`).join(", ");
  let done = 0;
  // Keyset pages by rowid: stable, and cheap on SQLite (every store table has one).
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const rows = await source.all<Record<string, unknown>>(
      `SELECT rowid AS "_rowid_", ${list} FROM ${table} WHERE rowid > $1 ORDER BY rowid LIMIT ${BATCH_ROWS}`,
      [after],
    );
    if (rows.length === 0) break;
    after = Number(rows[rows.length - 1]?._rowid_);
    const params: unknown[] = [];
    const tuples = rows.map((row) => {
      const marks = columns.map((column) => {
        params.push(row[column] ?? null);
        return `$${params.length}`;
      });
      return `(${marks.join(", ")})`;
    });
    await tx.run(`INSERT INTO ${table} (${list}) VALUES ${tuples.join(", ")}`, params);
    done += rows.length;
    onTable?.(table, done, total);
  }
}

/** Identity and serial columns continue after the copied ids and after `used` (ids SQLite already gave out). */
async function bumpSequences(tx: SqlExecutor, table: string, used: number): Promise<void> {
  const serials = await tx.all<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1
       AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')`,
    [table],
  );
  for (const { column_name: column } of serials) {
    await tx.get(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT COALESCE(MAX("${column}"), 0) FROM ${table}), $3::bigint, 1),
         (SELECT COUNT(*) > 0 FROM ${table}) OR $3::bigint > 0)`,
      [table, column, used],
    );
  }
}

/**
 * Row count and a checksum that ignores row order (each row's SHA-256 over its values in column order, summed
 * modulo 2^64), so that both backends can be compared whatever order they return rows in.
 */
export async function tableDigest(
  db: SqlExecutor,
  table: string,
  columns: readonly string[],
): Promise<{ rows: number; checksum: string }> {
  const list = columns.map((column) => `"${column}"`).join(", ");
  let sum = 0n;
  let rows = 0;
  const mask = (1n << 64n) - 1n;
  // Pages in the order of all columns (rows tied on every column are alike): stable on each backend, and the
  // copy runs while no server writes the store.
  const order = columns.map((_column, index) => index + 1).join(", ");
  for (let offset = 0; ; offset += 5000) {
    const batch = await db.all<Record<string, unknown>>(
      `SELECT ${list} FROM ${table} ORDER BY ${order} LIMIT 5000 OFFSET ${offset}`,
    );
    for (const row of batch) {
      const values = columns.map((column) => canonical(row[column]));
      const digest = createHash("sha256").update(JSON.stringify(values)).digest();
      sum = (sum + digest.readBigUInt64BE(0)) & mask;
    }
    rows += batch.length;
    if (batch.length < 5000) break;
  }
  return { rows, checksum: sum.toString(16).padStart(16, "0") };
}

function canonical(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (Buffer.isBuffer(value)) return `x:${value.toString("hex")}`;
  if (typeof value === "bigint") return Number(value);
  return value;
}
