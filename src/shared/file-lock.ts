// Exclusive cross-process lock on a file, held by the OS so that a crashed holder never leaves it stuck.
//
// Node has no flock(2). SQLite's `BEGIN EXCLUSIVE` takes a POSIX fcntl lock on its file, which the
// kernel drops when the holder exits; better-sqlite3 is already a dependency, so it is the lock
// primitive here. Acquisition never blocks the event loop: a busy lock is retried on a timer.
import { closeSync, constants, openSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import type Database from "better-sqlite3";
import { IvoaiError } from "./errors.js";
import { openSqlite } from "./native-sqlite.js";

export interface FileLockOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
}

/** A lock that serialises `run` callbacks across every process that locks the same path. */
export interface FileLock {
  withLock<T>(run: () => Promise<T>): Promise<T>;
  close(): void;
}

export function createFileLock(lockPath: string, options: FileLockOptions = {}): FileLock {
  const timeoutMs = options.timeoutMs ?? 10_000;
  let db: Database.Database | undefined;
  // In-process queue: one holder at a time per FileLock, before asking the OS.
  let tail: Promise<unknown> = Promise.resolve();

  const open = (): Database.Database => {
    if (!db) {
      // Create it private and refuse a symlink before SQLite opens it.
      closeSync(openSync(lockPath, constants.O_CREAT | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600));
      db = openSqlite(lockPath, { timeout: 0 });
    }
    return db;
  };

  const acquire = async (): Promise<Database.Database> => {
    const handle = open();
    const deadline = Date.now() + timeoutMs;
    let wait = 1;
    for (;;) {
      try {
        handle.exec("BEGIN EXCLUSIVE");
        return handle;
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() >= deadline) {
          throw new IvoaiError(
            "LOCK_TIMEOUT",
            `timed out after ${timeoutMs} ms waiting for the lock ${lockPath}`,
          );
        }
        await delay(wait + Math.random() * wait);
        wait = Math.min(wait * 2, 50);
      }
    }
  };

  return {
    withLock<T>(run: () => Promise<T>): Promise<T> {
      const result = tail.then(async () => {
        const handle = await acquire();
        try {
          return await run();
        } finally {
          handle.exec("ROLLBACK");
        }
      });
      tail = result.catch(() => undefined);
      return result;
    },
    close() {
      db?.close();
      db = undefined;
    },
  };
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}
