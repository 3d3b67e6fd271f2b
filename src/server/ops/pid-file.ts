// The pid file under run/ivoai: one server per root, found by `status`/`stop`, stale ones recognised and cleaned.
import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { ServerPaths } from "../../config/server-paths.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";

const PidRecordSchema = z.object({
  pid: z.number().int().positive(),
  /** Field 22 of /proc/PID/stat (clock ticks since boot): tells our process from a later one reusing its pid. */
  start_ticks: z.string().nullable(),
  started_at: z.string(),
  version: z.string(),
  /** Null until the listener is bound. */
  url: z.string().nullable(),
  public_url: z.string().nullable(),
});

export type PidRecord = z.infer<typeof PidRecordSchema>;

export type PidFileState =
  | { state: "absent" }
  | { state: "running"; record: PidRecord }
  | { state: "stale"; reason: string; record?: PidRecord };

/** The start time of `pid` in clock ticks since boot, or null when there is no such process (or no /proc). */
export async function processStartTicks(pid: number): Promise<string | null> {
  let stat: string;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // A zombie (Z) or dead (X) process has exited: it only waits for its parent to reap it.
  if (rest[0] === "Z" || rest[0] === "X") return null;
  return rest[19] ?? null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return errnoCode(error) === "EPERM";
  }
}

/** Whether the process the record names is still that process (not dead, not a reused pid). */
export async function isRecordedProcess(record: PidRecord): Promise<boolean> {
  if (!isAlive(record.pid)) return false;
  if (record.start_ticks !== null) return (await processStartTicks(record.pid)) === record.start_ticks;
  // Linux always has start times: a record without one was not written by a server.
  if (process.platform === "linux") return false;
  // Without /proc start times, fall back to the command line naming ivoai; unreadable is not ours.
  try {
    return (await fs.readFile(`/proc/${record.pid}/cmdline`, "utf8")).includes("ivoai");
  } catch {
    return false;
  }
}

/** The ivoai entry as a process runs it: the npm bin link or the bundle. */
const IVOAI_ENTRY = /^ivoai(\.m?js)?$/;

/**
 * Why the process the record names is not the server of `paths`, or null when it is. The run directory belongs
 * to the service user, so the pid file is only a claim: before anyone signals the pid, the process must have
 * the recorded start time, run as the pid file's owner, and be `ivoai … server start` for this very root (its
 * --root, else its IVOAI_SERVER_ROOT, else /). Whatever cannot be read counts against it.
 */
export async function whyNotOurServer(record: PidRecord, paths: ServerPaths): Promise<string | null> {
  const proc = `/proc/${record.pid}`;
  if (record.start_ticks === null) return "the pid file records no process start time";
  if ((await processStartTicks(record.pid)) !== record.start_ticks) {
    return `pid ${record.pid} now belongs to another program`;
  }
  try {
    const owner = (await fs.lstat(paths.pidFile)).uid;
    const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(await fs.readFile(`${proc}/status`, "utf8"));
    if (!uids || Number(uids[1]) !== owner || Number(uids[2]) !== owner) {
      return `pid ${record.pid} does not run as the pid file's owner (uid ${owner})`;
    }
    const argv = (await fs.readFile(`${proc}/cmdline`, "utf8")).split("\0");
    const entry = argv.findIndex((arg, index) => index > 0 && IVOAI_ENTRY.test(path.basename(arg)));
    const args = entry < 0 ? [] : argv.slice(entry + 1);
    const command = args.findIndex((arg, index) => arg === "server" && args[index + 1] === "start");
    if (command < 0) return `pid ${record.pid} is not 'ivoai server start'`;
    const options = args.slice(command + 2);
    const flag = options.findIndex((arg) => arg === "--root" || arg.startsWith("--root="));
    let root: string | undefined;
    if (flag >= 0) {
      const option = options[flag] ?? "";
      root = option === "--root" ? options[flag + 1] : option.slice("--root=".length);
    } else {
      const environ = (await fs.readFile(`${proc}/environ`, "utf8")).split("\0");
      root = environ
        .find((entry) => entry.startsWith("IVOAI_SERVER_ROOT="))
        ?.slice("IVOAI_SERVER_ROOT=".length);
    }
    root ||= "/";
    const resolved = path.isAbsolute(root)
      ? path.resolve(root)
      : path.resolve(await fs.readlink(`${proc}/cwd`), root);
    if (resolved !== paths.root && (await realOrSelf(resolved)) !== (await realOrSelf(paths.root))) {
      return `pid ${record.pid} serves another root (${resolved})`;
    }
    return null;
  } catch (error) {
    return `cannot inspect pid ${record.pid} (${errnoCode(error) ?? "unreadable"})`;
  }
}

async function realOrSelf(file: string): Promise<string> {
  try {
    return await fs.realpath(file);
  } catch {
    return file;
  }
}

/** Reads the pid file and says whether the server it names runs. */
export async function readPidFile(file: string): Promise<PidFileState> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return { state: "absent" };
    throw error;
  }
  let record: PidRecord;
  try {
    record = PidRecordSchema.parse(JSON.parse(text));
  } catch {
    return { state: "stale", reason: "unreadable pid file" };
  }
  if (await isRecordedProcess(record)) return { state: "running", record };
  const reason = isAlive(record.pid)
    ? `pid ${record.pid} now belongs to another program`
    : `pid ${record.pid} is not running`;
  return { state: "stale", reason, record };
}

/** Removes a stale pid file, unless a new server claimed the root meanwhile. */
export async function removeStalePidFile(paths: ServerPaths): Promise<PidFileState> {
  return withPidLock(paths, async () => {
    const state = await readPidFile(paths.pidFile);
    if (state.state === "stale") await fs.rm(paths.pidFile, { force: true });
    return state;
  });
}

export interface PidFileHandle {
  readonly record: PidRecord;
  /** Records the bound URLs (atomic replacement). */
  update(urls: { url: string; public_url: string }): Promise<void>;
  /** Removes the pid file if it is still ours. */
  release(): Promise<void>;
}

async function withPidLock<T>(paths: ServerPaths, run: () => Promise<T>): Promise<T> {
  await ensureLockOwner(paths);
  const lock = createFileLock(paths.pidLock);
  try {
    return await lock.withLock(run);
  } finally {
    lock.close();
  }
}

/**
 * Claims the root for this process: refuses while another server holds it, replaces a stale pid file,
 * and creates the new one atomically (written under a temporary name, then hard-linked into place).
 */
export async function claimPidFile(
  paths: ServerPaths,
  info: { version: string; now: Date; pid?: number },
): Promise<PidFileHandle> {
  const pid = info.pid ?? process.pid;
  const record: PidRecord = {
    pid,
    start_ticks: await processStartTicks(pid),
    started_at: info.now.toISOString(),
    version: info.version,
    url: null,
    public_url: null,
  };
  await ensureRunDir(paths.runDir);
  await withPidLock(paths, async () => {
    const existing = await readPidFile(paths.pidFile);
    if (existing.state === "running") {
      throw new IvoaiError(
        "CONFLICT",
        `a server for ${paths.root} is already running (pid ${existing.record.pid}` +
          `${existing.record.url ? `, ${existing.record.url}` : ""}); stop it with 'ivoai server stop --root ${paths.root}'`,
        { data: { pid: existing.record.pid } },
      );
    }
    if (existing.state === "stale") await fs.rm(paths.pidFile, { force: true });
    await createExclusive(paths.pidFile, serialise(record));
  });
  let current = record;
  return {
    get record() {
      return current;
    },
    async update(urls) {
      current = { ...current, ...urls };
      await writeFileAtomic(paths.pidFile, serialise(current), { mode: 0o644 });
    },
    async release() {
      await withPidLock(paths, async () => {
        const state = await readPidFile(paths.pidFile);
        const ours = state.state !== "absent" && state.record?.pid === pid;
        if (ours) await fs.rm(paths.pidFile, { force: true });
      });
    },
  };
}

/**
 * When root (an operator's `server stop`) creates the lock file in a run directory the service user owns, the
 * file must belong to that user too, or the service's next start could not open it.
 */
async function ensureLockOwner(paths: ServerPaths): Promise<void> {
  if (process.getuid?.() !== 0) return;
  try {
    const dir = await fs.stat(paths.runDir);
    if (dir.uid === 0) return;
    const handle = await fs.open(
      paths.pidLock,
      constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.chown(dir.uid, dir.gid);
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error;
  }
}

function serialise(record: PidRecord): string {
  return `${JSON.stringify(record)}\n`;
}

async function ensureRunDir(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o750 });
  } catch (error) {
    throw new IvoaiError("PERMISSION_DENIED", `cannot create ${dir} for the pid file (${errnoCode(error)})`, {
      cause: error,
    });
  }
}

async function createExclusive(target: string, data: string): Promise<void> {
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    // link(2) fails if the target exists: no second server can slip in between check and create.
    await fs.link(temp, target);
  } finally {
    await fs.rm(temp, { force: true });
  }
}
