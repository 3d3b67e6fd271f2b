// Schema work written once and run two ways: a generator yields the statements it needs and receives their
// results, and a driver runs them, asynchronously on the SQL layer (every store's open) or synchronously on one
// SQLite connection (backup restore, which must not run the event loop between its steps). So the same steps,
// not a copy of them, prepare a file for restore.
import type { SqliteDatabase } from "../../shared/native-sqlite.js";
import { type SqlExecutor, toPositional } from "./sql.js";

/** One statement a step asks for, with `$n` placeholders as everywhere in the SQL layer. */
export type SqlStep =
  | { op: "all"; sql: string; params: readonly unknown[] }
  | { op: "run"; sql: string; params: readonly unknown[] }
  | { op: "exec"; sql: string };

/** Steps that end with a `T`; each `yield` is answered with the statement's rows (all) or nothing. */
export type SqlSteps<T> = Generator<SqlStep, T, unknown>;

/** The rows of a query (use with `yield*`). */
export function* stepAll<T>(sql: string, params: readonly unknown[] = []): SqlSteps<T[]> {
  return (yield { op: "all", sql, params }) as T[];
}

/** A statement that writes (use with `yield*`). */
export function* stepRun(sql: string, params: readonly unknown[] = []): SqlSteps<void> {
  yield { op: "run", sql, params };
}

/** Several statements without parameters (use with `yield*`). */
export function* stepExec(sql: string): SqlSteps<void> {
  yield { op: "exec", sql };
}

/** Runs steps on the SQL layer (inside the caller's transaction when `tx` is one). */
export async function runSteps<T>(tx: SqlExecutor, steps: SqlSteps<T>): Promise<T> {
  let next = steps.next();
  while (!next.done) {
    const step = next.value;
    let answer: unknown;
    if (step.op === "all") answer = await tx.all(step.sql, step.params);
    else if (step.op === "run") await tx.run(step.sql, step.params);
    else await tx.exec(step.sql);
    next = steps.next(answer);
  }
  return next.value;
}

/** Runs steps synchronously on one SQLite connection (inside the caller's transaction, if any). */
export function runStepsSync<T>(db: SqliteDatabase, steps: SqlSteps<T>): T {
  let next = steps.next();
  while (!next.done) {
    const step = next.value;
    let answer: unknown;
    if (step.op === "exec") db.exec(step.sql);
    else {
      const positional = toPositional(step.sql, step.params);
      const statement = db.prepare(positional.sql);
      if (step.op === "all") answer = statement.all(positional.params);
      else statement.run(positional.params);
    }
    next = steps.next(answer);
  }
  return next.value;
}
