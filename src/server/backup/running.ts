// Is a server running on this root? Restore must not write under a live server (seed 000 stops it first).
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { catalogueFile } from "../context/service.js";
import { memoryFile } from "../memory/service.js";
import { regularFileOrAbsent } from "./safe-files.js";
import { storeInUse } from "./sqlite-files.js";

/** `run/ivoai/server.pid`: the pid of `ivoai server start`, as decimal text. */
export function serverPidFile(paths: ServerPaths): string {
  return path.join(paths.runDir, "server.pid");
}

/**
 * Why the server for this root looks alive, or undefined. Two signs, either enough: the pid file names a live
 * process, or another process has a store open (the server holds both stores for its whole life).
 */
export async function runningServerReason(paths: ServerPaths): Promise<string | undefined> {
  const pidFile = serverPidFile(paths);
  if (await regularFileOrAbsent(pidFile)) {
    const pid = Number((await fs.readFile(pidFile, "utf8")).slice(0, 32).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
      return `the server is running (pid ${pid}, from ${pidFile})`;
    }
  }
  for (const file of [catalogueFile(paths), memoryFile(paths)]) {
    if ((await regularFileOrAbsent(file)) && storeInUse(file)) {
      return `another process has ${file} open (a running 'ivoai server start'?)`;
    }
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user (a service account).
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
