// Whole-file replacement that never leaves a half-written file behind, even on a crash.
import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { errnoCode, IvoaiError } from "./errors.js";

export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o600). */
  mode?: number;
  /**
   * false skips the flushes, for transient files a crash may lose (AUTO's artifacts): readers still never see a
   * half-written file while the machine runs, and after a power loss the file may be missing or empty instead.
   */
  durable?: boolean;
}

/**
 * Writes `data` to a temporary sibling, flushes it, renames it over `target` and flushes the
 * directory. Refuses a target that is a symlink or is owned by another user.
 */
export async function writeFileAtomic(
  target: string,
  /** The contents, or its pieces in order (written one after another, never joined in memory). */
  data: string | Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  await assertReplaceable(target);
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    // writeFile on a handle writes from its current position: pieces follow one another.
    for (const piece of typeof data === "string" || data instanceof Uint8Array ? [data] : data)
      await handle.writeFile(piece);
    await handle.chmod(mode);
    if (options.durable !== false) await handle.sync();
  } catch (error) {
    await handle.close();
    await fs.rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  if (options.durable !== false) await syncDirectory(dir);
}

/** Refuses a `target` that `writeFileAtomic` would refuse: a symlink, not a regular file, another user's. */
export async function assertReplaceable(target: string): Promise<void> {
  try {
    const stat = await fs.lstat(target);
    if (stat.isSymbolicLink()) {
      throw new IvoaiError("UNSAFE_PATH", `refusing to replace ${target}: it is a symbolic link`);
    }
    if (!stat.isFile())
      throw new IvoaiError("UNSAFE_PATH", `refusing to replace ${target}: not a regular file`);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw new IvoaiError(
        "UNSAFE_PATH",
        `refusing to replace ${target}: owned by uid ${stat.uid}, not ${uid}`,
      );
    }
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw error;
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
