// Private snapshots of the exact files an update may change (config.toml, secrets.json, session records, the
// install manifest): 0700 directory under $XDG_STATE_HOME/ivoai/snapshots, restored byte for byte.
import { createHash, randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";

const indexSchema = z.object({
  id: z.string(),
  created_at: z.string(),
  files: z.array(
    z.object({
      path: z.string(),
      stored: z.string().nullable(),
      mode: z.number().int(),
      sha256: z.string().nullable(),
    }),
  ),
});

export type SnapshotIndex = z.infer<typeof indexSchema>;

export const snapshotsDir = (stateDir: string) => path.join(stateDir, "snapshots");

/** Copies each file (or records that it is absent) and returns the snapshot id. */
export async function createSnapshot(stateDir: string, files: readonly string[]): Promise<string> {
  const id = `snap_${new Date().toISOString().replace(/[-:.]/g, "")}_${randomBytes(3).toString("hex")}`;
  const dir = path.join(snapshotsDir(stateDir), id);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const index: SnapshotIndex = { id, created_at: new Date().toISOString(), files: [] };
  for (const [position, file] of files.entries()) {
    let data: Buffer;
    let mode = 0o600;
    try {
      const stat = await fs.lstat(file);
      if (!stat.isFile())
        throw new IvoaiError("UNSAFE_PATH", `${file} is not a regular file: not snapshotting it`);
      mode = stat.mode & 0o777;
      data = await fs.readFile(file);
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") throw error;
      index.files.push({ path: file, stored: null, mode, sha256: null });
      continue;
    }
    const stored = `f${position}`;
    await writeFileAtomic(path.join(dir, stored), data, { mode: 0o600 });
    index.files.push({ path: file, stored, mode, sha256: createHash("sha256").update(data).digest("hex") });
  }
  await writeFileAtomic(path.join(dir, "index.json"), `${JSON.stringify(index, null, 2)}\n`, { mode: 0o600 });
  return id;
}

/** Puts every snapshotted file back as it was (a file absent then is removed); checks each SHA-256 first. */
export async function restoreSnapshot(stateDir: string, id: string): Promise<SnapshotIndex> {
  const dir = path.join(snapshotsDir(stateDir), id);
  let index: SnapshotIndex;
  try {
    index = indexSchema.parse(JSON.parse(await fs.readFile(path.join(dir, "index.json"), "utf8")));
  } catch (error) {
    throw new IvoaiError("STATE_CORRUPT", `snapshot ${id} is missing or damaged: cannot restore from it`, {
      cause: error,
    });
  }
  const contents = new Map<string, Buffer>();
  for (const entry of index.files) {
    if (entry.stored === null) continue;
    const data = await fs.readFile(path.join(dir, entry.stored));
    if (createHash("sha256").update(data).digest("hex") !== entry.sha256)
      throw new IvoaiError(
        "STATE_CORRUPT",
        `snapshot ${id}: the copy of ${entry.path} does not match its hash`,
      );
    contents.set(entry.path, data);
  }
  for (const entry of index.files) {
    const data = contents.get(entry.path);
    if (data === undefined) await fs.rm(entry.path, { force: true });
    else {
      await fs.mkdir(path.dirname(entry.path), { recursive: true, mode: 0o700 });
      await writeFileAtomic(entry.path, data, { mode: entry.mode });
    }
  }
  return index;
}

/** Keeps the newest `keep` snapshots (by id, which sorts by time) and those named in `pinned`. */
export async function pruneSnapshots(
  stateDir: string,
  keep: number,
  pinned: readonly string[],
): Promise<void> {
  let names: string[];
  try {
    names = (await fs.readdir(snapshotsDir(stateDir))).sort();
  } catch {
    return;
  }
  for (const name of names.slice(0, Math.max(0, names.length - keep))) {
    if (!pinned.includes(name))
      await fs.rm(path.join(snapshotsDir(stateDir), name), { recursive: true, force: true });
  }
}
