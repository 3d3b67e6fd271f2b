// The enrollment state file: reads are cached by file identity, mutations hold the OS lock and replace it atomically.
import { promises as fs, statSync } from "node:fs";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";
import { type EnrollmentState, emptyEnrollmentState, enrollmentStateSchema } from "./state.js";

export interface EnrollmentStore {
  /** The current state; cheap when the file has not changed since the last read. */
  read(): Promise<EnrollmentState>;
  /** Runs `change` on the freshest state under the cross-process lock and persists what it returns. */
  mutate<T>(change: (state: EnrollmentState) => { state: EnrollmentState; result: T }): Promise<T>;
  close(): void;
}

export interface EnrollmentStoreOptions {
  statePath: string;
  lockPath: string;
  lockTimeoutMs?: number;
}

export function createEnrollmentStore(options: EnrollmentStoreOptions): EnrollmentStore {
  const lock = createFileLock(
    options.lockPath,
    options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs },
  );
  let cache: { key: string; state: EnrollmentState } | undefined;

  const load = async (): Promise<EnrollmentState> => {
    let key: string;
    try {
      // Atomic replacement gives a new inode, so identity (device + inode) + mtime + size tells a changed file;
      // the change time too, which a write in place moves and utimes cannot put back. Every request
      // authenticates through here: a synchronous stat is a few microseconds, an async one a thread-pool trip.
      const stat = statSync(options.statePath, { bigint: true });
      key = `${stat.dev}:${stat.ino}:${stat.mtimeNs}:${stat.ctimeNs}:${stat.size}`;
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return emptyEnrollmentState();
      throw error;
    }
    if (cache?.key === key) return cache.state;
    const text = await fs.readFile(options.statePath, "utf8");
    const state = parseState(text, options.statePath);
    cache = { key, state };
    return state;
  };

  return {
    read: load,
    mutate(change) {
      return lock.withLock(async () => {
        cache = undefined;
        const { state, result } = change(structuredClone(await load()));
        await writeFileAtomic(options.statePath, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
        return result;
      });
    },
    close: () => lock.close(),
  };
}

function parseState(text: string, file: string): EnrollmentState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new IvoaiError("STATE_CORRUPT", `${file} is not valid JSON; restore it from a backup`);
  }
  const parsed = enrollmentStateSchema.safeParse(raw);
  if (!parsed.success)
    throw new IvoaiError("STATE_CORRUPT", `${file} does not match the enrollment state schema`);
  return parsed.data;
}
