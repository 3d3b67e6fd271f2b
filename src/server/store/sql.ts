// One small asynchronous SQL interface that every domain store is written against, so that each has one
// implementation of its rules running on SQLite (embedded default) or PostgreSQL (several gateway replicas).
//
// Statements use PostgreSQL's `$1, $2…` placeholders on both backends (SQLite gets them rewritten), and the
// portable subset of SQL: TEXT/INTEGER columns, ISO-8601 times as text, JSON as text, RETURNING, ON CONFLICT.
// What differs (row locks, advisory locks) is asked for through the `dialect`.

import { IvoaiError } from "../../shared/errors.js";

export type Dialect = "sqlite" | "postgres";

export interface SqlRunResult {
  /** Rows inserted, updated or deleted. */
  changes: number;
}

export interface SqlExecutor {
  readonly dialect: Dialect;
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  run(sql: string, params?: readonly unknown[]): Promise<SqlRunResult>;
  /** Several statements without parameters (a migration). */
  exec(script: string): Promise<void>;
}

export interface SqlDatabase extends SqlExecutor {
  /**
   * Runs `work` in one transaction and commits what it wrote, or rolls everything back when it throws. On
   * SQLite the transaction takes the write lock at once (BEGIN IMMEDIATE), so transactions of every process are
   * serialised; on PostgreSQL it runs at READ COMMITTED, and rows are locked with `forUpdate(dialect)`. A
   * PostgreSQL serialisation failure or deadlock runs `work` again (up to 5 times): `work` must act on the
   * database only through `tx`.
   */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Text parameters with U+0000 are refused alike on both backends (PostgreSQL text cannot hold them). */
export function refuseNul(params: readonly unknown[]): void {
  for (const param of params)
    if (typeof param === "string" && param.includes("\0"))
      throw new IvoaiError("USAGE", "text may not contain NUL (U+0000) characters");
}

/** A LIKE pattern matching `text` anywhere, its wildcards taken literally (ESCAPE '\\'). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** The case-insensitive LIKE of a dialect (SQLite's LIKE already ignores ASCII case). */
export function likeOperator(dialect: Dialect): string {
  return dialect === "postgres" ? "ILIKE" : "LIKE";
}

/** The row-lock clause for a SELECT inside a transaction ("" on SQLite, whose transactions are serialised). */
export function forUpdate(dialect: Dialect): string {
  return dialect === "postgres" ? " FOR UPDATE" : "";
}

/** Statements already rewritten: their positional text and which parameter each `?` binds (bounded). */
const rewritten = new Map<string, { text: string; order: number[] }>();

/**
 * `$n` placeholders as SQLite's positional `?`, with the parameters in the order they are used (a `$n` used
 * twice binds twice). Statements must not hold a `$` inside a string literal.
 */
export function toPositional(sql: string, params: readonly unknown[]): { sql: string; params: unknown[] } {
  let known = rewritten.get(sql);
  if (!known) {
    const order: number[] = [];
    const text = sql.replace(/\$(\d+)/g, (_match, digits: string) => {
      order.push(Number(digits) - 1);
      return "?";
    });
    known = { text, order };
    if (rewritten.size >= 500) rewritten.clear();
    rewritten.set(sql, known);
  }
  const ordered = known.order.map((index) => {
    if (index < 0 || index >= params.length)
      throw new Error(`statement uses $${index + 1} but has ${params.length} parameters`);
    return params[index];
  });
  return { sql: known.text, params: ordered };
}
