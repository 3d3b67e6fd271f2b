// `ivoai server restore /ABSOLUTE/PATH`: verify everything and its signature first, then, holding the server's
// start lock, merge each store in one transaction, deleting nothing. The target's server.toml and connectors are
// kept unless the operator asks (--apply-config, --apply-connectors). Local CLI only: no HTTP route reaches this.
import { promises as fs } from "node:fs";
import path from "node:path";
import { loadServerConfig, parseServerConfig, type ServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { catalogueFile } from "../context/service.js";
import { memoryFile } from "../memory/service.js";
import { refusePostgres } from "./create.js";
import { type BackupStores, type StoreKind, SUPPORTED_SCHEMAS } from "./manifest.js";
import { type CatalogueScope, mergeCatalogue, mergeMemory } from "./merge.js";
import { blockers, nextSteps, notRestored, shellWord } from "./restore-notes.js";
import { type ConfigChange, type ConnectorPlan, configChanges, planConnectors } from "./restore-plan.js";
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
import type { SignatureCheck } from "./signature.js";
import { integrityProblems, storeFacts } from "./sqlite-files.js";
import { schemaProblems } from "./store-schema.js";
import { type VerifiedEntry, verifyBackup } from "./verify.js";

export interface RestoreOptions {
  paths: ServerPaths;
  /** The backup directory: an explicit absolute local path. */
  source: string;
  /** How each store prepares its SQLite file (the composition root's list: src/server/stores.ts). */
  stores: BackupStores;
  /** Write the backup's server.toml over the target's (the target's is kept otherwise). */
  applyConfig?: boolean;
  /** Add the backup's connectors the target lacks, with their documents. */
  applyConnectors?: boolean;
  /** Restore a backup this server did not sign (unsigned, another server's key, or a key this user cannot read). */
  allowUnsigned?: boolean;
  /** Verify and plan only: nothing is written. */
  dryRun?: boolean;
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
  dry_run: boolean;
  signature: SignatureCheck;
  /** written (--apply-config), kept (the target's), unchanged (the same settings), absent (neither written nor there). */
  config: { action: "written" | "kept" | "unchanged" | "absent"; changes: ConfigChange[] };
  connectors: ConnectorPlan[];
  /** With --dry-run, what would be written. */
  restored: RestoredEntry[];
  /** What the backup holds that was not restored, and the flag that would restore it. */
  not_restored: string[];
  /** Why a dry run would be refused (a real run throws instead). */
  blocked: string[];
  next_steps: string[];
}

interface Plan {
  backupConfig: ServerConfig | undefined;
  configEntry: VerifiedEntry | undefined;
  targetConfig: ServerConfig | undefined;
  changes: ConfigChange[];
  connectors: ConnectorPlan[];
  scope: CatalogueScope;
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
  if (running && !options.dryRun) {
    throw new IvoaiError("CONFLICT", `${running}: stop the server (or its units) first, then restore`);
  }
  // Everything is checked before the first write: a bad backup leaves the target untouched.
  options.onProgress?.("verifying the backup");
  const backup = await verifyBackup(path.normalize(source), {
    paths,
    integrity: true,
    stores: options.stores,
  });
  for (const dir of [paths.etcDir, paths.dataDir, paths.contextDir, paths.memoryDir])
    await directoryOrAbsent(dir);
  const targets = { catalogue: catalogueFile(paths), memory: memoryFile(paths) };
  for (const file of Object.values(targets)) await regularFileOrAbsent(file);
  const plan = await planRestore(options, backup.entries, targets.catalogue);

  const blocked = blockers({
    signature: backup.signature,
    allowUnsigned: options.allowUnsigned === true,
    targetConfig: plan.targetConfig,
    applyConfig: options.applyConfig === true,
    root: paths.root,
    configFile: paths.configFile,
  });
  if (blocked.reasons.length > 0 && !options.dryRun) {
    const command = ["ivoai", "server", "restore", shellWord(source), "--root", shellWord(paths.root)];
    throw new IvoaiError(
      "CONFLICT",
      `refusing to restore: ${blocked.reasons.join("; ")}. See what it would change with --dry-run; to go ahead, run: ${[...command, ...blocked.flags].join(" ")}`,
    );
  }
  const applyConfig = options.applyConfig === true && plan.configEntry !== undefined;
  const configAction: RestoreReport["config"]["action"] = !plan.backupConfig
    ? plan.targetConfig
      ? "kept"
      : "absent"
    : plan.changes.length === 0 && plan.targetConfig
      ? "unchanged"
      : applyConfig
        ? "written"
        : plan.targetConfig
          ? "kept"
          : "absent";

  const restored = options.dryRun
    ? await plannedWrites(backup.entries, targets, configAction === "written" ? paths.configFile : undefined)
    : await writeWithRoot(options, backup.entries, targets, plan, configAction === "written");
  const finalConfig = configAction === "written" ? plan.backupConfig : plan.targetConfig;
  const config = { action: configAction, changes: plan.changes };
  return {
    source,
    root: paths.root,
    dry_run: options.dryRun === true,
    signature: backup.signature,
    config,
    connectors: plan.connectors,
    restored,
    not_restored: notRestored(config, plan.connectors),
    blocked: blocked.reasons,
    next_steps: nextSteps(paths.root, finalConfig, (await regularFileOrAbsent(paths.tlsCert)) !== undefined),
  };
}

/** Reads both configurations and both catalogues' connectors: what the backup would change, before any write. */
async function planRestore(
  options: RestoreOptions,
  entries: VerifiedEntry[],
  targetCatalogue: string,
): Promise<Plan> {
  const { paths } = options;
  const configEntry = entries.find((entry) => entry.kind === "config");
  const backupConfig = configEntry
    ? parseServerConfig(configEntry.content?.toString("utf8") ?? "", `${options.source}/${configEntry.path}`)
    : undefined;
  const targetConfig = (await regularFileOrAbsent(paths.configFile))
    ? await loadServerConfig(paths.configFile)
    : undefined;
  const changes = backupConfig ? configChanges(targetConfig, backupConfig) : [];
  const catalogue = entries.find((entry) => entry.kind === "catalogue");
  const hasTarget = (await regularFileOrAbsent(targetCatalogue)) !== undefined;
  const connectors = catalogue
    ? planConnectors(
        catalogue.file,
        hasTarget ? targetCatalogue : undefined,
        options.applyConnectors === true,
      )
    : [];
  const scope: CatalogueScope = {
    add: connectors.filter((plan) => plan.action === "add").map((plan) => plan.name),
    documentsOf: connectors
      .filter((plan) => plan.action === "add" || plan.action === "merge")
      .map((plan) => plan.name),
  };
  return { backupConfig, configEntry, targetConfig, changes, connectors, scope };
}

/** What a dry run reports as its writes: each store created or merged, and server.toml when it would be written. */
async function plannedWrites(
  entries: VerifiedEntry[],
  targets: Record<StoreKind, string>,
  configFile: string | undefined,
): Promise<RestoredEntry[]> {
  const rows: RestoredEntry[] = [];
  for (const entry of entries) {
    if (entry.kind !== "catalogue" && entry.kind !== "memory") continue;
    const target = targets[entry.kind];
    const exists = (await regularFileOrAbsent(target)) || (await regularFileOrAbsent(`${target}-wal`));
    rows.push({ entry: entry.path, target, action: exists ? "merged" : "created" });
  }
  if (configFile) rows.push({ entry: "server.toml", target: configFile, action: "written" });
  return rows;
}

/** Creates a missing root (a fresh host), then writes under the server's start lock. */
async function writeWithRoot(
  options: RestoreOptions,
  entries: VerifiedEntry[],
  targets: Record<StoreKind, string>,
  plan: Plan,
  writeConfig: boolean,
): Promise<RestoredEntry[]> {
  const { paths } = options;
  if (!(await directoryOrAbsent(paths.root))) await fs.mkdir(paths.root, { recursive: true, mode: 0o755 });
  return withServerStopped(paths, () =>
    writeRestore(options, entries, targets, plan.scope, writeConfig ? plan.configEntry : undefined),
  );
}

/**
 * The writes, under the server's start lock: each store is merged in one transaction (a missing store is built
 * fresh by its own opener in staging, filled by the same merge, then renamed into place), server.toml last and
 * only when the operator asked for it.
 */
async function writeRestore(
  options: RestoreOptions,
  entries: VerifiedEntry[],
  targets: Record<StoreKind, string>,
  scope: CatalogueScope,
  configEntry: VerifiedEntry | undefined,
): Promise<RestoredEntry[]> {
  const { paths } = options;
  const prepareStore = (kind: StoreKind, file: string) => options.stores[kind](file);
  const restored: RestoredEntry[] = [];
  await ensureDirectory(paths.root, paths.dataDir, 0o750);
  const staging = await fs.mkdtemp(path.join(paths.dataDir, ".restore-"));
  try {
    await fs.chmod(staging, 0o700);
    const staged = await stageStores(options, entries, staging);
    for (const { kind, entry, file } of staged) {
      const target = targets[kind];
      await ensureDirectory(paths.root, path.dirname(target), 0o750);
      options.onProgress?.(`restoring the ${kind} store`);
      const merge = (into: string) =>
        kind === "catalogue" ? mergeCatalogue(into, file, scope) : mergeMemory(into, file);
      if (!(await regularFileOrAbsent(target)) && !(await regularFileOrAbsent(`${target}-wal`))) {
        // Never the backup's file itself: a new store with this build's schema, filled with the known columns.
        const fresh = path.join(staging, `new-${entry.path}`);
        prepareStore(kind, fresh);
        const added = merge(fresh);
        prepareStore(kind, fresh);
        await fs.chmod(fresh, 0o640);
        const owner = await ownerFor(target);
        if (owner) await fs.lchown(fresh, owner.uid, owner.gid);
        await fs.rename(fresh, target);
        await syncDirectory(path.dirname(target));
        restored.push({ entry: entry.path, target, action: "created", added });
      } else {
        prepareStore(kind, target);
        const added = merge(target);
        // Names events an older backup recorded without a public id.
        prepareStore(kind, target);
        restored.push({ entry: entry.path, target, action: "merged", added });
      }
    }
    if (configEntry?.content) {
      await ensureDirectory(paths.root, paths.etcDir, 0o755);
      await replaceFile(paths.configFile, configEntry.content, 0o640);
      restored.push({ entry: configEntry.path, target: paths.configFile, action: "written" });
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  return restored;
}

/** Copies each store into private staging while hashing it again (the source may have changed since verify). */
async function stageStores(
  options: RestoreOptions,
  entries: VerifiedEntry[],
  staging: string,
): Promise<{ kind: StoreKind; entry: VerifiedEntry; file: string }[]> {
  const staged: { kind: StoreKind; entry: VerifiedEntry; file: string }[] = [];
  for (const entry of entries) {
    if (entry.kind !== "catalogue" && entry.kind !== "memory") continue;
    options.onProgress?.(`copying ${entry.path}`);
    const file = path.join(staging, entry.path);
    await copyVerified(entry, file);
    await fs.chmod(file, 0o400);
    const problems = [...integrityProblems(file), ...schemaProblems(entry.kind, file, options.stores)];
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
  return staged;
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
