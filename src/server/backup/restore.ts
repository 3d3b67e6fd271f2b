// `ivoai server restore /ABSOLUTE/PATH`: verify everything first, then write file by file, atomically,
// merging into what is there and deleting nothing. Local CLI only: no HTTP route reaches this.
import { promises as fs } from "node:fs";
import path from "node:path";
import { parseServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { catalogueFile } from "../context/service.js";
import { memoryFile } from "../memory/service.js";
import { type StoreKind, SUPPORTED_SCHEMAS } from "./manifest.js";
import { mergeCatalogue, mergeMemory, prepareStore } from "./merge.js";
import { runningServerReason } from "./running.js";
import {
  directoryOrAbsent,
  ensureDirectory,
  hashFile,
  regularFileOrAbsent,
  syncDirectory,
} from "./safe-files.js";
import { integrityProblems, storeFacts } from "./sqlite-files.js";
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

  const restored: RestoredEntry[] = [];
  await ensureDirectory(paths.root, paths.dataDir, 0o750);
  const staging = await fs.mkdtemp(path.join(paths.dataDir, ".restore-"));
  try {
    await fs.chmod(staging, 0o700);
    // Stores are copied into private staging while hashed again (the source may have changed since verify).
    const staged: { kind: StoreKind; entry: VerifiedEntry; file: string }[] = [];
    for (const entry of backup.entries) {
      if (entry.kind !== "catalogue" && entry.kind !== "memory") continue;
      options.onProgress?.(`copying ${entry.path}`);
      const file = path.join(staging, entry.path);
      await copyVerified(entry, file);
      const problems = integrityProblems(file);
      if (problems.length > 0) {
        throw new IvoaiError(
          "STATE_CORRUPT",
          `invalid backup: ${entry.path} fails integrity_check: ${problems[0]}`,
        );
      }
      const { schema } = storeFacts(file);
      if (!(schema <= SUPPORTED_SCHEMAS[entry.kind])) {
        throw new IvoaiError(
          "STATE_CORRUPT",
          `invalid backup: ${entry.path} has schema ${schema}, newer than this ivoai`,
        );
      }
      // Migrates an older backup to this build's schema, in staging.
      prepareStore(entry.kind, file);
      staged.push({ kind: entry.kind, entry, file });
    }

    if (config?.content) {
      await ensureDirectory(paths.root, paths.etcDir, 0o755);
      await writeFileAtomic(paths.configFile, config.content, { mode: 0o640 });
      restored.push({ entry: config.path, target: paths.configFile, action: "written" });
    }
    for (const { kind, entry, file } of staged) {
      const target = targets[kind];
      await ensureDirectory(paths.root, path.dirname(target), 0o750);
      options.onProgress?.(`restoring the ${kind} store`);
      if (!(await regularFileOrAbsent(target)) && !(await regularFileOrAbsent(`${target}-wal`))) {
        // Nothing to merge with: the verified copy becomes the store, by one rename on the same file system.
        await fs.chmod(file, 0o640);
        await fs.rename(file, target);
        await syncDirectory(path.dirname(target));
        restored.push({ entry: entry.path, target, action: "created" });
      } else {
        prepareStore(kind, target);
        const added = kind === "catalogue" ? mergeCatalogue(target, file) : mergeMemory(target, file);
        restored.push({ entry: entry.path, target, action: "merged", added });
      }
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
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
