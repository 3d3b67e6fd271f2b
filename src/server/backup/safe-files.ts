// File access for backup and restore: regular files only (lstat, then O_NOFOLLOW and a same-inode check),
// bounded reads, SHA-256 while reading, private modes.
import { createHash, randomBytes } from "node:crypto";
import { constants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { errnoCode, IvoaiError } from "../../shared/errors.js";

/** lstat that refuses anything but a regular file; undefined when absent. */
export async function regularFileOrAbsent(file: string): Promise<Stats | undefined> {
  let stat: Stats;
  try {
    stat = await fs.lstat(file);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
  if (stat.isSymbolicLink()) throw new IvoaiError("UNSAFE_PATH", `refusing ${file}: it is a symbolic link`);
  if (!stat.isFile()) throw new IvoaiError("UNSAFE_PATH", `refusing ${file}: not a regular file`);
  return stat;
}

/** lstat that refuses anything but a real directory; undefined when absent. */
export async function directoryOrAbsent(dir: string): Promise<Stats | undefined> {
  let stat: Stats;
  try {
    stat = await fs.lstat(dir);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
  if (stat.isSymbolicLink()) throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: it is a symbolic link`);
  if (!stat.isDirectory()) throw new IvoaiError("UNSAFE_PATH", `refusing ${dir}: not a directory`);
  return stat;
}

/** Creates `dir` (and missing parents under `root`) with `mode`, refusing links on the way. */
export async function ensureDirectory(root: string, dir: string, mode: number): Promise<void> {
  const relative = path.relative(root, dir);
  let current = root;
  for (const segment of relative.split(path.sep).filter(Boolean)) {
    current = path.join(current, segment);
    if (await directoryOrAbsent(current)) continue;
    // Parents that ivoai does not own (etc, var/lib, …) get the usual 0755; the leaf gets `mode`.
    const wanted = current === dir ? mode : 0o755;
    const owner = await ownerFor(current);
    await fs.mkdir(current, { mode: wanted });
    await fs.chmod(current, wanted);
    if (owner) await fs.lchown(current, owner.uid, owner.gid);
  }
}

/** Opens a regular file without following a link, and checks it is the file `lstat` saw. */
export async function openRegular(file: string, expected?: Stats): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === "ELOOP")
      throw new IvoaiError("UNSAFE_PATH", `refusing ${file}: it is a symbolic link`);
    throw error;
  }
  const stat = await handle.stat();
  if (!stat.isFile() || (expected && (stat.ino !== expected.ino || stat.dev !== expected.dev))) {
    await handle.close();
    throw new IvoaiError("UNSAFE_PATH", `refusing ${file}: it changed while being read`);
  }
  return handle;
}

/**
 * Reads at most `limit` bytes of a regular file, hashing them; `sink` receives each chunk (to copy it).
 * Refuses a file that grows past `limit`.
 */
export async function hashFile(
  file: string,
  limit: number,
  options: { expected?: Stats; sink?: (chunk: Uint8Array) => Promise<void>; keep?: boolean } = {},
): Promise<{ size: number; sha256: string; content?: Buffer }> {
  const handle = await openRegular(file, options.expected);
  const hash = createHash("sha256");
  const kept: Buffer[] = [];
  let size = 0;
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > limit)
        throw new IvoaiError("STATE_CORRUPT", `invalid backup: ${file} is larger than ${limit} bytes`);
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      if (options.keep) kept.push(Buffer.from(chunk));
      if (options.sink) await options.sink(chunk);
    }
  } finally {
    await handle.close();
  }
  return { size, sha256: hash.digest("hex"), ...(options.keep ? { content: Buffer.concat(kept) } : {}) };
}

/** Creates a new private file (never an existing one), writes it, and flushes it. */
export async function writeNewFile(file: string, data: Uint8Array): Promise<void> {
  const handle = await fs.open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Flushes a directory entry (after a rename or a create). */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Who a file written as root should belong to: the owner of the file it replaces, or for a new file the owner of
 * its directory (a service set up with `--apply` runs as its own user and must still open what root wrote).
 * Undefined when not root: the file is the caller's.
 */
export async function ownerFor(file: string): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const stat = await fs.lstat(file);
    return { uid: stat.uid, gid: stat.gid };
  } catch (error) {
    if (errnoCode(error) !== "ENOENT") throw error;
  }
  const parent = await fs.stat(path.dirname(file));
  return { uid: parent.uid, gid: parent.gid };
}

/**
 * Replaces `target` whole: a private temporary sibling, given `mode` and (as root) the owner `ownerFor` says,
 * flushed, renamed over the target. Refuses a target that is a link or not a regular file.
 */
export async function replaceFile(target: string, data: Uint8Array, mode: number): Promise<void> {
  await regularFileOrAbsent(target);
  const owner = await ownerFor(target);
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeNewFile(temp, data);
    await fs.chmod(temp, mode);
    if (owner) await fs.lchown(temp, owner.uid, owner.gid);
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  await syncDirectory(dir);
}
