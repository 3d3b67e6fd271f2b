// `ivoai server restore /ABSOLUTE/PATH`: verify everything first, then, holding the server's start lock, merge
// each store in one transaction and write server.toml last, deleting nothing. Local CLI only: no HTTP route reaches this.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parseServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { catalogueFile } from "../context/service.js";
import { memoryFile } from "../memory/service.js";
import { refusePostgres } from "./create.js";
import { type StoreKind, SUPPORTED_SCHEMAS } from "./manifest.js";
import { mergeCatalogue, mergeMemory, prepareStore } from "./merge.js";
import { runningServerReason, withServerStopped } from "./running.js";
import {
  directoryOrAbsent,
  ensureDirectory,
  hashFile,
  ownerFor,
  regularFileOrAbsent,
  replaceFile,
  syncDirectory,
} from "./safe-files.js";
import { integrityProblems, storeFacts } from "./sqlite-files.js";
import { schemaProblems } from "./store-schema.js";
import { type VerifiedEntry, verifyBackup } from "./verify.js";

export interface RestoreOptions {
  paths: ServerPaths;
  /** The backup directory: an explicit absolute local path. */
  source: string;
  onProgress?: (text: string) => void;
}

export interface RestoredEntry {
  entry: string;
  target: string;
  /** written: a file (re)written whole; created: a store that did not exist; merged: rows added to a store. */
  action: "written" | "created" | "merged";
  added?: Record<string, number>;
}

export interface RestoreReport {
  source: string;
  root: string;
  restored: RestoredEntry[];
  next_steps: string[];
}

export async function restoreBackup(options: RestoreOptions): Promise<RestoreReport> {
  const { paths, source } = options;
  if (!path.isAbsolute(source)) {
    throw new IvoaiError("USAGE", `restore needs an absolute path to the backup directory, not '${source}'`);
  }
  // A target on PostgreSQL would not read the SQLite files a restore writes.
  await refusePostgres(paths).catch((error: unknown) => {
    if (!(isIvoaiError(error) && error.code === "CONFIG_MISSING")) throw error;
  });
  const running = await runningServerReason(paths);
  if (running) {
    throw new IvoaiError("CONFLICT", `${running}: stop the server (or its units) first, then restore`);
  }
  // Everything is checked before the first write: a bad backup leaves the target untouched.
  options.onProgress?.("verifying the backup");
  const backup = await verifyBackup(path.normalize(source), { integrity: true });
  const config = backup.entries.find((entry) => entry.kind === "config");
  if (config) parseServerConfig(config.content?.toString("utf8") ?? "", `${source}/${config.path}`);
  for (const dir of [paths.etcDir, paths.dataDir, paths.contextDir, paths.memoryDir])
    await directoryOrAbsent(dir);
  const targets = { catalogue: catalogueFile(paths), memory: memoryFile(paths) };
  for (const file of Object.values(targets)) await regularFileOrAbsent(file);

  const restored = await withServerStopped(paths, () => writeRestore(options, backup.entries, targets));
  return {
    source,
    root: paths.root,
    restored,
    next_steps: [
      `ivoai server init --root ${paths.root}   (recreates enrollment state and secrets directories if missing)`,
      `ivoai server start --root ${paths.root}   (rebuilds the search indexes from the restored stores)`,
      "re-enroll clients and reconnect web assistants: credentials and OAuth grants are never in a backup",
    ],
  };
}

/**
 * The writes, under the server's start lock: each store is merged in one transaction (a missing store is built
 * fresh by its own opener in staging, filled by the same merge, then renamed into place), server.toml last.
 */
async function writeRestore(
  options: RestoreOptions,
  entries: VerifiedEntry[],
  targets: Record<StoreKind, string>,
): Promise<RestoredEntry[]> {
  const { paths } = options;
  const restored: RestoredEntry[] = [];
  await ensureDirectory(paths.root, paths.dataDir, 0o750);
  const staging = await fs.mkdtemp(path.join(paths.dataDir, ".restore-"));
  try {
    await fs.chmod(staging, 0o700);
    // Stores are copied into private staging while hashed again (the source may have changed since verify).
    const staged: { kind: StoreKind; entry: VerifiedEntry; file: string }[] = [];
    for (const entry of entries) {
      if (entry.kind !== "catalogue" && entry.kind !== "memory") continue;
      options.onProgress?.(`copying ${entry.path}`);
      const file = path.join(staging, entry.path);
      await copyVerified(entry, file);
      await fs.chmod(file, 0o400);
      const problems = [...integrityProblems(file), ...schemaProblems(entry.kind, file)];
      if (problems.length > 0) {
        throw new IvoaiError("STATE_CORRUPT", `invalid backup: ${entry.path}: ${problems[0]}`);
      }
      const { schema } = storeFacts(file);
      if (!(schema <= SUPPORTED_SCHEMAS[entry.kind])) {
        throw new IvoaiError(
          "STATE_CORRUPT",
          `invalid backup: ${entry.path} has schema ${schema}, newer than this ivoai`,
        );
      }
      staged.push({ kind: entry.kind, entry, file });
    }

    for (const { kind, entry, file } of staged) {
      const target = targets[kind];
      await ensureDirectory(paths.root, path.dirname(target), 0o750);
      options.onProgress?.(`restoring the ${kind} store`);
      const merge = kind === "catalogue" ? mergeCatalogue : mergeMemory;
      if (!(await regularFileOrAbsent(target)) && !(await regularFileOrAbsent(`${target}-wal`))) {
        // Never the backup's file itself: a new store with this build's schema, filled with the known columns.
        const fresh = path.join(staging, `new-${entry.path}`);
        prepareStore(kind, fresh);
        const added = merge(fresh, file);
        prepareStore(kind, fresh);
        await fs.chmod(fresh, 0o640);
        const owner = await ownerFor(target);
        if (owner) await fs.lchown(fresh, owner.uid, owner.gid);
        await fs.rename(fresh, target);
        await syncDirectory(path.dirname(target));
        restored.push({ entry: entry.path, target, action: "created", added });
      } else {
        prepareStore(kind, target);
        const added = merge(target, file);
        // Names events an older backup recorded without a public id.
        prepareStore(kind, target);
        restored.push({ entry: entry.path, target, action: "merged", added });
      }
    }

    const entry = configEntry(entries);
    if (entry?.content) {
      await ensureDirectory(paths.root, paths.etcDir, 0o755);
      await replaceFile(paths.configFile, entry.content, 0o640);
      restored.push({ entry: entry.path, target: paths.configFile, action: "written" });
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  return restored;
}

const configEntry = (entries: VerifiedEntry[]) => entries.find((entry) => entry.kind === "config");

/** Copies a verified entry into a new private file, checking size and SHA-256 of the bytes actually copied. */
async function copyVerified(entry: VerifiedEntry, dest: string): Promise<void> {
  const handle = await fs.open(dest, "wx", 0o600);
  let copied: { size: number; sha256: string };
  try {
    copied = await hashFile(entry.file, entry.size, {
      sink: async (chunk) => {
        await handle.write(chunk);
      },
    });
    await handle.sync();
  } finally {
    await handle.close();
  }
  if (copied.size !== entry.size || copied.sha256 !== entry.sha256) {
    throw new IvoaiError("STATE_CORRUPT", `invalid backup: ${entry.path} changed while being restored`);
  }
}
