// Private snapshots of the exact files an update may change (config.toml, secrets.json, session records, the
// install manifest): 0700 directory under $XDG_STATE_HOME/ivoai/snapshots, restored byte for byte; after.json
// holds their hashes as the update left them, so a rollback can tell whether it would lose a later change.
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
  const index = await readIndex(stateDir, id);
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

const afterSchema = z.record(z.string(), z.string().nullable());
const afterFile = (stateDir: string, id: string) => path.join(snapshotsDir(stateDir), id, "after.json");

async function sha256Of(file: string): Promise<string | null> {
  try {
    return createHash("sha256")
      .update(await fs.readFile(file))
      .digest("hex");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return null;
    throw error;
  }
}

/** Records each snapshotted file's SHA-256 (null: absent) as the update left it, except `skip`. */
export async function recordAfterUpdate(
  stateDir: string,
  id: string,
  skip: readonly string[],
): Promise<void> {
  const index = await readIndex(stateDir, id);
  const after: Record<string, string | null> = {};
  for (const entry of index.files)
    if (!skip.includes(entry.path)) after[entry.path] = await sha256Of(entry.path);
  await writeFileAtomic(afterFile(stateDir, id), `${JSON.stringify(after, null, 2)}\n`, { mode: 0o600 });
}

/** The files recorded by `recordAfterUpdate` that differ now (all of them when nothing was recorded). */
export async function changedSinceUpdate(stateDir: string, id: string): Promise<string[]> {
  let after: Record<string, string | null>;
  try {
    after = afterSchema.parse(JSON.parse(await fs.readFile(afterFile(stateDir, id), "utf8")));
  } catch {
    const index = await readIndex(stateDir, id);
    return index.files.map((entry) => entry.path).filter((file) => path.basename(file) !== "install.json");
  }
  const changed: string[] = [];
  for (const [file, hash] of Object.entries(after)) if ((await sha256Of(file)) !== hash) changed.push(file);
  return changed;
}

async function readIndex(stateDir: string, id: string): Promise<SnapshotIndex> {
  try {
    const text = await fs.readFile(path.join(snapshotsDir(stateDir), id, "index.json"), "utf8");
    return indexSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new IvoaiError("STATE_CORRUPT", `snapshot ${id} is missing or damaged: cannot restore from it`, {
      cause: error,
    });
  }
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
