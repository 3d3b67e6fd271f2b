// Is a server running on this root? Restore must not write under a live server (seed 000 stops it first), and
// holds the server's start lock while it writes so that no server starts halfway through.
import { constants, promises as fs } from "node:fs";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";
import { catalogueFile } from "../context/service.js";
import { memoryFile } from "../memory/service.js";
import { readPidFile } from "../ops/pid-file.js";
import { ensureDirectory, ownerFor, regularFileOrAbsent } from "./safe-files.js";
import { storeInUse } from "./sqlite-files.js";

/** `run/ivoai/server.pid`: the JSON record `ivoai server start` writes. */
export function serverPidFile(paths: ServerPaths): string {
  return paths.pidFile;
}

/**
 * Why the server for this root looks alive, or undefined. Two signs, either enough: the pid file names a live
 * `ivoai server start`, or another process has a store open (the server holds both stores for its whole life).
 */
export async function runningServerReason(paths: ServerPaths): Promise<string | undefined> {
  const state = await readPidFile(paths.pidFile);
  if (state.state === "running" && state.record.pid !== process.pid) {
    return `the server is running (pid ${state.record.pid}, from ${paths.pidFile})`;
  }
  for (const file of [catalogueFile(paths), memoryFile(paths)]) {
    if ((await regularFileOrAbsent(file)) && storeInUse(file)) {
      return `another process has ${file} open (a running 'ivoai server start'?)`;
    }
  }
  return undefined;
}

/** How long restore waits for a server that is starting or stopping to let go of the start lock. */
const START_LOCK_WAIT_MS = 2_000;

/**
 * Runs `run` holding the lock `ivoai server start` takes to claim the pid file (run/ivoai/server.pid.lock), after
 * checking that no server runs: a start during `run` waits for it, and fails if `run` outlasts its wait.
 */
export async function withServerStopped<T>(paths: ServerPaths, run: () => Promise<T>): Promise<T> {
  await ensureDirectory(paths.root, paths.runDir, 0o750);
  // Created as root, the lock file belongs to whoever owns run/ivoai, or the service could not start later.
  const owner = await ownerFor(paths.pidLock);
  const handle = await fs.open(
    paths.pidLock,
    constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    if (owner) await handle.chown(owner.uid, owner.gid);
  } finally {
    await handle.close();
  }
  const lock = createFileLock(paths.pidLock, { timeoutMs: START_LOCK_WAIT_MS });
  let holding = false;
  try {
    return await lock.withLock(async () => {
      holding = true;
      const running = await runningServerReason(paths);
      if (running) {
        throw new IvoaiError("CONFLICT", `${running}: stop the server (or its units) first, then restore`);
      }
      return run();
    });
  } catch (error) {
    if (!holding && error instanceof IvoaiError && error.code === "LOCK_TIMEOUT") {
      throw new IvoaiError(
        "CONFLICT",
        `a server for ${paths.root} is starting or stopping (${paths.pidLock} is held): wait, stop it, then restore`,
        { cause: error },
      );
    }
    if (!holding && errnoCode(error) === "EACCES") {
      throw new IvoaiError("PERMISSION_DENIED", `cannot take the server's start lock ${paths.pidLock}`, {
        cause: error,
      });
    }
    throw error;
  } finally {
    lock.close();
  }
}
