// Reads a tree without ever leaving it: every path component is opened relative to its verified parent
// descriptor with O_NOFOLLOW (openat semantics through /proc/self/fd), and files are read through the
// descriptor that was checked. Linux only, as the server is.

import {
  type BigIntStats,
  closeSync,
  constants,
  promises as fs,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
} from "node:fs";
import { SkipError } from "../skip.js";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: opening a FIFO that slipped past the type check must not hang the ingest.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Directory levels below a connector's root that are still read; anything deeper is skipped as "too deep". */
export const MAX_DEPTH = 64;

/** An open directory inside the tree. */
export interface SafeDir {
  fd: number;
  handle: fs.FileHandle;
}

export function isSafeName(name: string): boolean {
  return name.length > 0 && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0");
}

function viaDescriptor(dir: SafeDir, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens the tree's root itself; the root may not be a symlink. */
export async function openRoot(root: string): Promise<SafeDir> {
  const handle = await fs.open(root, DIR_FLAGS);
  return { fd: handle.fd, handle };
}

export async function openChildDir(parent: SafeDir, name: string): Promise<SafeDir> {
  if (!isSafeName(name)) throw new SkipError("unsafe name", name);
  try {
    const handle = await fs.open(viaDescriptor(parent, name), DIR_FLAGS);
    return { fd: handle.fd, handle };
  } catch (error) {
    throw mapOpenError(error);
  }
}

/** Entries of an open directory with their types (from the directory itself, without following links). */
export async function listDir(dir: SafeDir): Promise<import("node:fs").Dirent[]> {
  return fs.readdir(`/proc/self/fd/${dir.fd}`, { withFileTypes: true });
}

export interface ReadFileOptions {
  /** Read regular files with more than one link too (a hard link may point at a file outside the root). */
  allowHardlinks?: boolean;
}

/**
 * Reads a regular file `name` of `parent` through its own descriptor, verifying it is a regular file, has one
 * link (unless hard links are allowed) and is at most `maxBytes` long. Synchronous on purpose: files come from the page cache in well under a millisecond, and a
 * thread-pool round trip per open/fstat/read/close made ingestion wait more than it worked.
 */
export async function readChildFile(
  parent: SafeDir,
  name: string,
  maxBytes: number,
  options: ReadFileOptions = {},
): Promise<{ data: Buffer; mtimeMs: number; size: number; sourceStat: string | undefined }> {
  if (!isSafeName(name)) throw new SkipError("unsafe name", name);
  let fd: number;
  try {
    fd = openSync(viaDescriptor(parent, name), FILE_FLAGS);
  } catch (error) {
    throw mapOpenError(error);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new SkipError("special file");
    if (stat.nlink > 1 && !options.allowHardlinks) throw new SkipError("hard link", `${stat.nlink} links`);
    if (stat.size > maxBytes) throw new SkipError("too large", `${stat.size} bytes`);
    // Read one byte past the limit so a file that grew since fstat is caught too.
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let total = 0;
    for (;;) {
      const bytesRead = readSync(fd, buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total === buffer.length) break;
    }
    if (total > maxBytes) throw new SkipError("too large", "grew while reading");
    const sourceStat = total === stat.size ? sourceStatKey(fstatSync(fd, { bigint: true })) : undefined;
    return { data: buffer.subarray(0, total), mtimeMs: stat.mtimeMs, size: total, sourceStat };
  } catch (error) {
    if (error instanceof SkipError) throw error;
    throw mapOpenError(error);
  } finally {
    closeSync(fd);
  }
}

/** Longer than the coarsest timestamp tick of filesystems ingest may meet (FAT's 2 s, some SMB mounts). */
export const STAT_TRUST_MS = 3000;

/**
 * A file's identity and version (device, inode, size, modification and change times in nanoseconds), which a
 * re-ingest compares instead of reading the file. Undefined for a file changed in the last STAT_TRUST_MS: another
 * write within the same timestamp tick would leave the same key, so such a file is read and hashed again next time.
 */
export function sourceStatKey(stat: BigIntStats, now = Date.now()): string | undefined {
  const recent = BigInt(now - STAT_TRUST_MS) * 1_000_000n;
  if (stat.mtimeNs > recent || stat.ctimeNs > recent) return undefined;
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
}

/**
 * The stat key and size of regular file `name` of `parent`, without opening it or following a link; undefined
 * when it is anything readChildFile would refuse or look at more closely (then the caller reads it).
 */
export function statChildFile(
  parent: SafeDir,
  name: string,
  maxBytes: number,
  options: ReadFileOptions = {},
): { sourceStat: string; size: number } | undefined {
  if (!isSafeName(name)) return undefined;
  try {
    const stat = lstatSync(viaDescriptor(parent, name), { bigint: true, throwIfNoEntry: false });
    if (!stat?.isFile() || (stat.nlink > 1n && !options.allowHardlinks) || stat.size > BigInt(maxBytes))
      return undefined;
    const sourceStat = sourceStatKey(stat);
    return sourceStat ? { sourceStat, size: Number(stat.size) } : undefined;
  } catch {
    return undefined;
  }
}

/** Walks `relPath` component by component from the root, returning the parent dir of its last component. */
export async function openParentOf(
  root: SafeDir,
  relPath: string,
): Promise<{ dir: SafeDir; name: string; opened: SafeDir[] }> {
  const parts = relPath.split("/");
  const name = parts.pop() ?? "";
  const opened: SafeDir[] = [];
  let dir = root;
  try {
    for (const part of parts) {
      dir = await openChildDir(dir, part);
      opened.push(dir);
    }
  } catch (error) {
    await closeAll(opened);
    throw error;
  }
  return { dir, name, opened };
}

export async function closeAll(dirs: readonly SafeDir[]): Promise<void> {
  await Promise.all(dirs.map((dir) => dir.handle.close().catch(() => undefined)));
}

function mapOpenError(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  if (code === "ELOOP") return new SkipError("symlink");
  if (code === "ENOTDIR") return new SkipError("special file", "not a directory");
  if (code === "ENOENT") return new SkipError("not found");
  if (code === "EACCES" || code === "EPERM") return new SkipError("unreadable");
  if (code === "ENXIO") return new SkipError("special file");
  return error;
}
