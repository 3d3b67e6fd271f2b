// setup, update (probe, snapshot, migrate, promote, doctor, self-rollback), rollback and uninstall of the
// managed agent CLIs and ivoai's own persisted data. The CLI file only parses flags and prints.
import { execFile } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import path from "node:path";
import type { ClientPaths } from "../../config/client-paths.js";
import { DATA_VERSION, type Migration, migrationPath, probeDataVersion } from "../../config/migrations.js";
import { IvoaiError, isIvoaiError } from "../../shared/errors.js";
import { createFileLock } from "../../shared/file-lock.js";
import {
  type AgentName,
  type Catalogue,
  type CatalogueEntry,
  catalogueEntry,
  type LockedEntry,
  type LockedName,
  lockedEntry,
} from "./catalogue.js";
import { refuseUnsupported } from "./components.js";
import {
  type BinLink,
  findPreExisting,
  installGeneration,
  managedBinDir,
  promoteGeneration,
  pruneGenerations,
} from "./generation.js";
import { lockedBinTarget } from "./locked.js";
import {
  type AgentRecord,
  type InstallManifest,
  type ManagedRecord,
  managedAgents,
  managedComponents,
  manifestFile,
  readManifest,
  writeManifest,
} from "./manifest.js";
import {
  changedSinceUpdate,
  createSnapshot,
  pruneSnapshots,
  recordAfterUpdate,
  restoreSnapshot,
} from "./snapshot.js";

export interface LifecycleDeps {
  paths: ClientPaths;
  catalogue: Catalogue;
  env: NodeJS.ProcessEnv;
  progress: (text: string) => void;
  /** The platform as manifest/components.json names it (default this machine's). */
  platform?: string;
}

const now = () => new Date().toISOString();

const NOT_SET_UP = "nothing is installed yet: run 'ivoai setup' first";

async function withInstallLock<T>(paths: ClientPaths, run: () => Promise<T>): Promise<T> {
  await fs.mkdir(paths.stateDir, { recursive: true, mode: 0o700 });
  const lock = createFileLock(path.join(paths.stateDir, "install.lock"), { timeoutMs: 2_000 });
  try {
    return await lock.withLock(run);
  } catch (error) {
    if ((error as { code?: string }).code === "LOCK_TIMEOUT")
      throw new IvoaiError(
        "LOCK_TIMEOUT",
        "another ivoai setup/update/rollback is running; wait for it to finish",
      );
    throw error;
  } finally {
    lock.close();
  }
}

function managedFrom(entry: CatalogueEntry | LockedEntry): ManagedRecord {
  return {
    status: "managed",
    package: entry.package,
    version: entry.version,
    integrity: entry.integrity,
    bins: entry.bins,
    allow_scripts: "allow_scripts" in entry ? entry.allow_scripts : false,
    ...("tarball" in entry && entry.tarball ? { tarball: entry.tarball } : {}),
    installed_at: now(),
  };
}

/** What one generation holds: the agents and the lock-installed components, each managed or pre_existing. */
interface Installed {
  agents: Record<string, AgentRecord>;
  components: Record<string, AgentRecord>;
}

/** Installs everything managed in `installed` as one new generation (not yet promoted); returns its name. */
function installManaged(deps: LifecycleDeps, installed: Installed): Promise<string> {
  const locked = managedComponents(installed).map(([name, record]) => {
    const entry = lockedEntry(deps.catalogue, name as LockedName);
    if (entry.version !== record.version || entry.integrity !== record.integrity)
      throw new IvoaiError(
        "CONFLICT",
        `${name} ${record.version} is installed and this ivoai's reviewed lock is for ${entry.version}: ` +
          "run 'ivoai update' first; nothing was installed",
      );
    return entry;
  });
  return installGeneration({
    layout: layoutOf(deps),
    packages: managedAgents(installed).map(([, record]) => record),
    locked,
    env: deps.env,
    progress: deps.progress,
    maxBytes: deps.catalogue.max_install_bytes,
  });
}

const layoutOf = (deps: LifecycleDeps) => ({ dataDir: deps.paths.dataDir, cacheDir: deps.paths.cacheDir });

/** The links bin/ gets for `installed`: an agent's from the generation's node_modules, a component's from its own. */
const binsOf = (installed: Installed): BinLink[] => [
  ...managedAgents(installed).flatMap(([, record]) =>
    record.bins.map((name) => ({ name, target: `node_modules/.bin/${name}` })),
  ),
  ...managedComponents(installed).flatMap(([component, record]) =>
    record.bins.map((name) => ({ name, target: lockedBinTarget(component as LockedName, name) })),
  ),
];

/** A requested agent's or component's record: pre_existing when its executable is on PATH, else managed. */
async function recordFor(
  deps: LifecycleDeps,
  entry: CatalogueEntry | LockedEntry,
  label: string,
): Promise<AgentRecord> {
  const layout = layoutOf(deps);
  const found = (await Promise.all(entry.bins.map((bin) => findPreExisting(bin, layout, deps.env)))).find(
    Boolean,
  );
  if (!found) return managedFrom(entry);
  deps.progress(`${label}: already installed at ${found}; leaving it alone (pre_existing)`);
  return { status: "pre_existing", path: found, recorded_at: now() };
}

export interface SetupRow {
  status: "managed" | "pre_existing";
  version: string | null;
  path: string;
}

export interface SetupResult {
  generation: string | null;
  bin_dir: string;
  manifest: string;
  agents: ({ agent: string } & SetupRow)[];
  /** The components asked for with --with (none by default). */
  components: ({ component: string } & SetupRow)[];
}

/**
 * Installs the requested agents and lock-installed components that are not already on PATH, as one new
 * generation beside what an earlier setup installed; records the others as pre_existing.
 */
export async function setup(
  deps: LifecycleDeps,
  requested: readonly AgentName[],
  components: readonly LockedName[] = [],
): Promise<SetupResult> {
  const layout = layoutOf(deps);
  refuseUnsupported([...requested, ...components], deps.platform);
  return withInstallLock(deps.paths, async () => {
    const previous = await readManifest(deps.paths.stateDir);
    const installed: Installed = {
      agents: { ...(previous?.agents ?? {}) },
      components: { ...(previous?.components ?? {}) },
    };
    let changed = false;
    const want = async (
      records: Record<string, AgentRecord>,
      name: string,
      entry: CatalogueEntry | LockedEntry,
    ) => {
      if (records[name]?.status === "managed") return;
      records[name] = await recordFor(deps, entry, name);
      if (records[name].status === "managed") changed = true;
    };
    for (const agent of requested) await want(installed.agents, agent, catalogueEntry(deps.catalogue, agent));
    for (const name of components) await want(installed.components, name, lockedEntry(deps.catalogue, name));
    let generation = previous?.generation ?? null;
    if (changed) {
      generation = await installManaged(deps, installed);
      await promoteGeneration(layout, generation, binsOf(installed));
    }
    const manifest: InstallManifest = {
      schema: 1,
      catalogue_revision: deps.catalogue.revision,
      generation,
      data_version: previous?.data_version ?? (await probeDataVersion(deps.paths)),
      ...installed,
      // A new generation replaces the one a rollback would return to.
      previous: changed ? null : (previous?.previous ?? null),
      updated_at: now(),
    };
    await writeManifest(deps.paths.stateDir, manifest);
    // Only once the manifest names the promoted generation: a crash here leaves a stray directory, not a lie.
    if (changed) await pruneGenerations(layout, [generation]);
    const row = (name: string, record: AgentRecord | undefined): SetupRow =>
      record?.status === "managed"
        ? {
            status: "managed",
            version: record.version,
            path: path.join(managedBinDir(layout), record.bins[0] ?? name),
          }
        : { status: "pre_existing", version: null, path: record?.path ?? "" };
    return {
      generation,
      bin_dir: managedBinDir(layout),
      manifest: manifestFile(deps.paths.stateDir),
      agents: requested.map((agent) => ({ agent, ...row(agent, installed.agents[agent]) })),
      components: components.map((component) => ({
        component,
        ...row(component, installed.components[component]),
      })),
    };
  });
}

interface VersionChange {
  installed: string;
  available: string;
  change: "upgrade" | "downgrade" | "none";
}

function versionChange(
  record: ManagedRecord,
  entry: Pick<CatalogueEntry, "version" | "integrity">,
): VersionChange {
  const same = entry.version === record.version && entry.integrity === record.integrity;
  const change = same ? "none" : compareVersions(entry.version, record.version) < 0 ? "downgrade" : "upgrade";
  return { installed: record.version, available: entry.version, change };
}

export interface UpdateProbe {
  catalogue_revision: { installed: number; available: number };
  agents: ({ agent: string } & VersionChange)[];
  /** The lock-installed components (`setup --with`), each moved to this build's reviewed lock. */
  components: ({ component: string } & VersionChange)[];
  data: { version: number; target: number; migrations: { id: string; description: string }[] };
  up_to_date: boolean;
}

/** What `ivoai update` would change, without changing anything. */
export async function probeUpdate(
  deps: LifecycleDeps,
): Promise<{ probe: UpdateProbe; manifest: InstallManifest }> {
  const manifest = await readManifest(deps.paths.stateDir);
  if (!manifest) throw new IvoaiError("NOT_FOUND", NOT_SET_UP);
  const agents = managedAgents(manifest).map(([agent, record]) => ({
    agent,
    ...versionChange(record, catalogueEntry(deps.catalogue, agent as AgentName)),
  }));
  const components = managedComponents(manifest).map(([component, record]) => ({
    component,
    ...versionChange(record, lockedEntry(deps.catalogue, component as LockedName)),
  }));
  const version = await probeDataVersion(deps.paths);
  const migrations = migrationPath(version, DATA_VERSION).map(({ id, description }) => ({ id, description }));
  return {
    manifest,
    probe: {
      catalogue_revision: { installed: manifest.catalogue_revision, available: deps.catalogue.revision },
      agents,
      components,
      data: { version, target: DATA_VERSION, migrations },
      up_to_date: [...agents, ...components].every((row) => row.change === "none") && migrations.length === 0,
    },
  };
}

function compareVersions(a: string, b: string): number {
  const parts = (v: string) => (v.split("-")[0] ?? "").split(".").map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return a.localeCompare(b);
}

/** The files an update may change, snapshotted before it starts. */
async function filesToSnapshot(paths: ClientPaths): Promise<string[]> {
  const sessions = path.join(paths.stateDir, "sessions");
  const records = await fs.readdir(sessions).catch(() => [] as string[]);
  return [
    paths.configFile,
    paths.secretsFile,
    manifestFile(paths.stateDir),
    ...records.filter((name) => name.endsWith(".json")).map((name) => path.join(sessions, name)),
  ];
}

export interface UpdateResult {
  probe: UpdateProbe;
  updated: boolean;
  snapshot: string | null;
  generation: string | null;
  doctor: AgentHealth[];
}

export interface AgentHealth {
  agent: string;
  bin: string;
  expected: string;
  ok: boolean;
  detail: string;
}

/**
 * Runs each managed agent's and component's `--version` from ivoai's bin dir: it must start and report the
 * pinned version.
 */
export async function checkManagedAgents(
  paths: ClientPaths,
  manifest: InstallManifest,
): Promise<AgentHealth[]> {
  const binDir = managedBinDir({ dataDir: paths.dataDir, cacheDir: paths.cacheDir });
  return Promise.all(
    [...managedAgents(manifest), ...managedComponents(manifest)].map(async ([agent, record]) => {
      const bin = path.join(binDir, record.bins[0] ?? agent);
      return new Promise<AgentHealth>((resolve) => {
        execFile(
          bin,
          ["--version"],
          { timeout: 15_000, env: { PATH: process.env.PATH ?? "" } },
          (error, stdout) => {
            const line = `${stdout}`.trim().split("\n")[0] ?? "";
            const ok = !error && line.includes(record.version);
            const detail = error ? `--version failed: ${error.message.split("\n")[0]}` : line;
            resolve({ agent, bin, expected: record.version, ok, detail: detail.slice(0, 200) });
          },
        );
      });
    }),
  );
}

/** `ivoai update`: explicit, all or nothing; on any failure the previous state comes back by itself. */
export async function update(deps: LifecycleDeps): Promise<UpdateResult> {
  const layout = layoutOf(deps);
  if (!(await readManifest(deps.paths.stateDir))) throw new IvoaiError("NOT_FOUND", NOT_SET_UP);
  return withInstallLock(deps.paths, async () => {
    const { probe, manifest } = await probeUpdate(deps);
    if (probe.up_to_date)
      return { probe, updated: false, snapshot: null, generation: manifest.generation, doctor: [] };
    const snapshot = await createSnapshot(deps.paths.stateDir, await filesToSnapshot(deps.paths));
    deps.progress(`snapshot ${snapshot} taken`);
    const installed: Installed = { agents: { ...manifest.agents }, components: { ...manifest.components } };
    for (const row of probe.agents)
      if (row.change !== "none")
        installed.agents[row.agent] = managedFrom(catalogueEntry(deps.catalogue, row.agent as AgentName));
    for (const row of probe.components)
      if (row.change !== "none")
        installed.components[row.component] = managedFrom(
          lockedEntry(deps.catalogue, row.component as LockedName),
        );
    let generation = manifest.generation;
    if ([...probe.agents, ...probe.components].some((row) => row.change !== "none")) {
      generation = await installManaged(deps, installed);
    }
    const applied: Migration[] = [];
    const next: InstallManifest = {
      ...manifest,
      catalogue_revision: deps.catalogue.revision,
      generation,
      data_version: probe.data.target,
      ...installed,
      previous: { generation: manifest.generation, snapshot },
      updated_at: now(),
    };
    try {
      for (const step of migrationPath(probe.data.version, probe.data.target)) {
        deps.progress(`migrating ${step.id}: ${step.description}`);
        await step.up(deps.paths);
        applied.push(step);
      }
      await promoteGeneration(layout, generation, binsOf(installed));
      await writeManifest(deps.paths.stateDir, next);
      deps.progress("checking the updated agents (doctor)");
      const doctor = await checkManagedAgents(deps.paths, next);
      const failed = doctor.filter((row) => !row.ok);
      if (failed.length > 0)
        throw new IvoaiError(
          "INTERNAL",
          `doctor after update: ${failed.map((row) => `${row.agent} ${row.expected}: ${row.detail}`).join("; ")}`,
        );
      await recordAfterUpdate(deps.paths.stateDir, snapshot, [manifestFile(deps.paths.stateDir)]);
      await pruneGenerations(layout, [generation, manifest.generation]);
      await pruneSnapshots(deps.paths.stateDir, 3, [snapshot]);
      return { probe, updated: true, snapshot, generation, doctor };
    } catch (error) {
      deps.progress("update failed: rolling back");
      for (const step of applied.reverse()) await step.down(deps.paths).catch(() => undefined);
      try {
        await restoreSnapshot(deps.paths.stateDir, snapshot);
        await promoteGeneration(layout, manifest.generation, binsOf(manifest));
        if (generation !== manifest.generation) await pruneGenerations(layout, [manifest.generation]);
      } catch (undo) {
        throw new IvoaiError(
          "STATE_CORRUPT",
          `update failed (${(error as Error).message}) and so did its automatic rollback ` +
            `(${(undo as Error).message}); the files before the update are in snapshot ${snapshot}`,
          { cause: error },
        );
      }
      throw new IvoaiError(
        isIvoaiError(error) ? error.code : "INTERNAL",
        `update failed and was rolled back (snapshot ${snapshot}): ${(error as Error).message}`,
        { cause: error },
      );
    }
  });
}

export interface RollbackResult {
  snapshot: string;
  generation: string | null;
  restored: string[];
  agents: { agent: string; version: string }[];
  components: { component: string; version: string }[];
}

/**
 * `ivoai rollback`: the previous managed versions and the persisted files exactly as the last update found them.
 * Refuses when one of those files changed after the update (a new server, a rotated credential) unless `force`.
 */
export async function rollback(
  deps: LifecycleDeps,
  options: { force?: boolean } = {},
): Promise<RollbackResult> {
  const layout = layoutOf(deps);
  if (!(await readManifest(deps.paths.stateDir))) throw new IvoaiError("NOT_FOUND", NOT_SET_UP);
  return withInstallLock(deps.paths, async () => {
    const manifest = await readManifest(deps.paths.stateDir);
    if (!manifest?.previous)
      throw new IvoaiError("NOT_FOUND", "nothing to roll back to: no update was applied since setup");
    const { generation, snapshot } = manifest.previous;
    if (
      generation !== null &&
      !(await fs.stat(path.join(layout.dataDir, "agents", generation)).catch(() => null))
    )
      throw new IvoaiError(
        "STATE_CORRUPT",
        `the previous agent generation ${generation} is gone: cannot roll back`,
      );
    if (!options.force) {
      const changed = await changedSinceUpdate(deps.paths.stateDir, snapshot);
      if (changed.length > 0)
        throw new IvoaiError(
          "CONFLICT",
          `${changed.join(", ")} changed after the update; rolling back would restore the old ` +
            `${changed.length === 1 ? "copy" : "copies"} and lose that change (a server connected or a ` +
            "credential rotated since): nothing was changed; pass --force to roll back anyway",
          { data: { changed } },
        );
    }
    const index = await restoreSnapshot(deps.paths.stateDir, snapshot);
    const restored = (await readManifest(deps.paths.stateDir)) ?? { ...manifest, agents: {}, components: {} };
    await promoteGeneration(layout, generation, binsOf(restored));
    await writeManifest(deps.paths.stateDir, { ...restored, generation, previous: null, updated_at: now() });
    await pruneGenerations(layout, [generation]);
    return {
      snapshot,
      generation,
      restored: index.files.map((file) => file.path),
      agents: managedAgents(restored).map(([agent, record]) => ({ agent, version: record.version })),
      components: managedComponents(restored).map(([component, record]) => ({
        component,
        version: record.version,
      })),
    };
  });
}

export interface UninstallResult {
  removed: string[];
  kept: { path: string; why: string }[];
  pre_existing: { agent: string; path: string }[];
}

export interface UninstallPlan {
  /** Absolute directories whose last component is `ivoai`, removed whole. */
  remove: string[];
  /** Directories not removed, and why (one that is, holds or sits in the config dir, without --purge). */
  skip: { path: string; why: string }[];
}

const within = (dir: string, parent: string) => {
  const rel = path.relative(parent, dir);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
};

/** Which directories `uninstall` removes; refuses any that is not an absolute `.../ivoai` directory. */
export async function planUninstall(paths: ClientPaths, purge: boolean): Promise<UninstallPlan> {
  const real = (dir: string) => fs.realpath(dir).catch(() => path.resolve(dir));
  const config = [paths.configDir, await real(paths.configDir)];
  const plan: UninstallPlan = { remove: [], skip: [] };
  for (const dir of [paths.dataDir, paths.stateDir, paths.cacheDir, ...(purge ? [paths.configDir] : [])]) {
    if (!path.isAbsolute(dir) || path.basename(dir) !== "ivoai")
      throw new IvoaiError("UNSAFE_PATH", `refusing to remove ${dir}: not an absolute path ending in /ivoai`);
    if (plan.remove.includes(dir)) continue;
    const resolved = await real(dir);
    const overlaps = config.some(
      (c) => within(dir, c) || within(c, dir) || within(resolved, c) || within(c, resolved),
    );
    if (!purge && overlaps)
      plan.skip.push({
        path: dir,
        why: `it is, holds or sits in the config dir ${paths.configDir} (remove with --purge)`,
      });
    else plan.remove.push(dir);
  }
  return plan;
}

/**
 * Removes ivoai's data, state (with the install record) and cache; config and secrets only with `purge`.
 * Holds the install lock, so it never deletes a tree a running setup/update is writing into.
 */
export async function uninstall(paths: ClientPaths, purge: boolean): Promise<UninstallResult> {
  const plan = await planUninstall(paths, purge);
  return withInstallLock(paths, async () => {
    const manifest = await readManifest(paths.stateDir).catch(() => undefined);
    const preExisting = Object.entries(manifest?.agents ?? {}).flatMap(([agent, record]) =>
      record.status === "pre_existing" ? [{ agent, path: record.path }] : [],
    );
    const removed: string[] = [];
    for (const dir of plan.remove) {
      const stat = await fs.lstat(dir).catch(() => null);
      if (!stat) continue;
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(dir);
    }
    const candidates = [
      { path: paths.configFile, why: "settings (remove with --purge)" },
      { path: paths.secretsFile, why: "server credentials (remove with --purge)" },
    ];
    const kept = [
      ...plan.skip.filter((item) => existsSync(item.path)),
      ...(purge ? [] : candidates.filter((item) => existsSync(item.path))),
    ];
    return { removed, kept, pre_existing: preExisting };
  });
}
