// `server stop` for one root: SIGTERM to the process the pid file names, then wait until it is gone.
import { setTimeout as delay } from "node:timers/promises";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { isRecordedProcess, readPidFile, removeStalePidFile, whyNotOurServer } from "./pid-file.js";
import { assertServerTree } from "./status.js";

export type StopOutcome =
  | { outcome: "not_running"; root: string; stale_pid_file: string | null }
  | { outcome: "stopped"; root: string; pid: number; waited_ms: number };

/**
 * Sends SIGTERM to the server recorded in the pid file and waits until that process is gone. Throws
 * (naming the pid) when it outlives `timeoutMs`; never sends SIGKILL itself.
 */
export async function stopServer(
  paths: ServerPaths,
  options: { timeoutMs: number; now?: () => number },
): Promise<StopOutcome> {
  await assertServerTree(paths);
  const now = options.now ?? Date.now;
  const state = await readPidFile(paths.pidFile);
  if (state.state !== "running") {
    const cleaned = state.state === "stale" ? await removeStalePidFile(paths) : state;
    return {
      outcome: "not_running",
      root: paths.root,
      stale_pid_file: cleaned.state === "stale" ? cleaned.reason : null,
    };
  }
  const { record } = state;
  // The run directory is the service user's: make sure the pid names this root's server before signalling it.
  const notOurs = await whyNotOurServer(record, paths);
  if (notOurs !== null) {
    throw new IvoaiError(
      "CONFLICT",
      `${paths.pidFile} does not name an ivoai server for ${paths.root} (${notOurs}): nothing was signalled; ` +
        "if no server runs, remove the pid file",
      { data: { pid: record.pid } },
    );
  }
  const started = now();
  try {
    process.kill(record.pid, "SIGTERM");
  } catch (error) {
    if (errnoCode(error) === "EPERM") {
      throw new IvoaiError(
        "PERMISSION_DENIED",
        `not allowed to signal the server (pid ${record.pid}): run 'ivoai server stop' as its user or root`,
      );
    }
    if (errnoCode(error) !== "ESRCH") throw error;
  }
  // Polls the process table: there is no portable way to wait for a process that is not our child.
  let wait = 10;
  while (await isRecordedProcess(record)) {
    if (now() - started >= options.timeoutMs) {
      throw new IvoaiError(
        "CONFLICT",
        `the server (pid ${record.pid}) is still running ${Math.round(options.timeoutMs / 1000)}s after SIGTERM; ` +
          `wait longer with --timeout, or end it with 'kill -KILL ${record.pid}'`,
        { data: { pid: record.pid } },
      );
    }
    await delay(wait);
    wait = Math.min(wait * 2, 200);
  }
  // A server that died without cleaning up leaves its pid file behind.
  await removeStalePidFile(paths);
  return { outcome: "stopped", root: paths.root, pid: record.pid, waited_ms: now() - started };
}
