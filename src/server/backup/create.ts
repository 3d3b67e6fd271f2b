// `ivoai server backup create`: a consistent copy of config, catalogue and memory with a versioned manifest,
// built in a private temporary directory and renamed into place only when complete, signed with the server's key.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { loadServerConfig, parseServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { IvoaiError } from "../../shared/errors.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { createEmbedder } from "../context/embedder.js";
import { catalogueFile } from "../context/service.js";
import { vectorIndexName } from "../context/vectors.js";
import { memoryFile } from "../memory/service.js";
import {
  BACKUP_FORMAT,
  BACKUP_FORMAT_VERSION,
  BACKUP_NAME_PREFIX,
  type BackupManifest,
  ENTRY_SPECS,
  EXCLUDED,
  MANIFEST_FILE,
  type ManifestEntry,
  type StoreKind,
} from "./manifest.js";
import {
  directoryOrAbsent,
  ensureDirectory,
  hashFile,
  regularFileOrAbsent,
  syncDirectory,
  writeNewFile,
} from "./safe-files.js";
import { ensureSigningKey, SIGNATURE_FILE, signatureFor } from "./signature.js";
import { snapshotStore, storeFacts } from "./sqlite-files.js";

export interface CreateBackupOptions {
  paths: ServerPaths;
  /** Where backups go (default var/lib/ivoai/backups). */
  outDir?: string;
  now?: () => Date;
  onProgress?: (text: string) => void;
}

export interface BackupReport {
  path: string;
  name: string;
  manifest: BackupManifest;
  total_bytes: number;
}

export async function createBackup(options: CreateBackupOptions): Promise<BackupReport> {
  const { paths } = options;
  const now = (options.now ?? (() => new Date()))();
  for (const dir of [paths.etcDir, paths.dataDir, paths.contextDir, paths.memoryDir])
    await directoryOrAbsent(dir);
  const configStat = await regularFileOrAbsent(paths.configFile);
  if (!configStat) {
    throw new IvoaiError("CONFIG_MISSING", `no server configuration at ${paths.configFile}: check --root`);
  }
  await refusePostgres(paths);
  const outDir = path.resolve(options.outDir ?? paths.backupsDir);
  if (!(await directoryOrAbsent(outDir))) await ensureDirectory(path.parse(outDir).root, outDir, 0o700);

  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  // The key is the server's own (secrets folder, 0600); a backup never holds it.
  const key = await ensureSigningKey(paths);
  const name = `${BACKUP_NAME_PREFIX}${stamp}-${randomBytes(3).toString("hex")}`;
  const temp = path.join(outDir, `.${name}.tmp`);
  await fs.mkdir(temp, { mode: 0o700 });
  await fs.chmod(temp, 0o700);
  try {
    const entries: ManifestEntry[] = [];
    const stores: BackupManifest["stores"] = {};
    const add = async (file: string, schema?: number) => {
      const entryName = path.basename(file);
      const spec = ENTRY_SPECS[entryName];
      if (!spec) throw new IvoaiError("INTERNAL", `no backup entry named ${entryName}`);
      const { size, sha256 } = await hashFile(file, spec.maxBytes);
      entries.push({ path: entryName, kind: spec.kind, size, sha256, ...(schema ? { schema } : {}) });
    };

    // Server config: non-secret by design (secrets live under etc/ivoai/secrets, which is never read here).
    const config = await hashFile(paths.configFile, 1024 * 1024, { expected: configStat, keep: true });
    const parsedConfig = parseServerConfig(config.content?.toString("utf8") ?? "", paths.configFile);
    await writeNewFile(path.join(temp, "server.toml"), config.content ?? Buffer.alloc(0));
    await add(path.join(temp, "server.toml"));

    const facts: Partial<Record<StoreKind, { schema: number; generation: number }>> = {};
    for (const [kind, source] of [
      ["catalogue", catalogueFile(paths)],
      ["memory", memoryFile(paths)],
    ] as const) {
      if (!(await regularFileOrAbsent(source))) continue;
      const dest = path.join(temp, `${kind}.sqlite`);
      await snapshotStore(source, dest, (done, total) =>
        options.onProgress?.(`backing up the ${kind} store: ${done}/${total} pages`),
      );
      const fact = storeFacts(dest);
      facts[kind] = fact;
      stores[kind] = { schema: fact.schema };
      await add(dest, fact.schema);
    }

    // What a restored server rebuilds, and from what: nothing here is restored as a file.
    const embedder = parsedConfig.context.embedder;
    const rebuild = {
      lexical_index: {
        source: "catalogue.sqlite",
        generation: facts.catalogue?.generation ?? null,
        when: "on start",
      },
      memory_index: {
        source: "memory.sqlite",
        generation: facts.memory?.generation ?? null,
        when: "on start",
      },
      vector_index:
        embedder.provider === "none" || embedder.provider === "local"
          ? null
          : {
              // The corpus model's id (kept with the catalogue) completes its index name.
              name:
                embedder.provider === "corpus"
                  ? vectorIndexName({ model: "corpus-<model id>", dims: embedder.dims })
                  : vectorIndexName(createEmbedder(embedder) ?? embedder),
              provider: embedder.provider,
              when: "re-embedded from the catalogue at the next ingest",
            },
    };
    await writeNewFile(
      path.join(temp, "index-rebuild.json"),
      Buffer.from(`${JSON.stringify(rebuild, null, 2)}\n`),
    );
    await add(path.join(temp, "index-rebuild.json"));

    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      ivoai_version: IVOAI_VERSION,
      created_at: now.toISOString(),
      stores,
      entries,
      excluded: EXCLUDED,
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    await writeNewFile(path.join(temp, MANIFEST_FILE), manifestBytes);
    await writeNewFile(path.join(temp, SIGNATURE_FILE), signatureFor(key, manifestBytes));
    await syncDirectory(temp);
    const final = path.join(outDir, name);
    await fs.rename(temp, final);
    await syncDirectory(outDir);
    return { path: final, name, manifest, total_bytes: entries.reduce((sum, entry) => sum + entry.size, 0) };
  } catch (error) {
    await fs.rm(temp, { recursive: true, force: true });
    throw error;
  }
}

/**
 * A server on PostgreSQL keeps its stores there, not in the SQLite files a backup copies: a backup of the files
 * would look complete and hold stale or no data. PostgreSQL's own tools back it up (and replicate it).
 */
export async function refusePostgres(paths: ServerPaths): Promise<void> {
  const config = await loadServerConfig(paths.configFile);
  if (config.store.backend === "postgres")
    throw new IvoaiError(
      "USAGE",
      "this server's stores are in PostgreSQL: back them up with PostgreSQL's tools (pg_dump --schema='ivoai_*', or the managed service's backups); 'ivoai server backup' covers SQLite servers",
    );
}
