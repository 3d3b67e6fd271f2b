// The Ruflo lifecycle coordinator (seed: optional, provider-less, ephemeral). Admission enforces the seed's
// checks against the real CLI; afterwards only opaque task ids and lifecycle states are sent to Ruflo.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import type { TaskState } from "./contracts.js";
import type { CoordinatedSession, CoordinatorAdmission, LifecycleCoordinator } from "./coordinator.js";
import { isOpaqueTaskId, opaqueTaskId, PRIMARY_TASK_KEY } from "./opaque-task-id.js";
import {
  commandLabel,
  oneLine,
  RufloCommandError,
  rufloEnv,
  runRuflo,
  type Spawn,
  trailingJson,
} from "./ruflo-process.js";

/** The reviewed release (seed: Ruflo 3.38.12 with an exact npm pin) and its entry points' SHA-256. */
export const RUFLO_PIN = Object.freeze({
  version: "3.38.12",
  cliPackage: "@claude-flow/cli",
  cliVersion: "3.38.12",
  /** ruflo/bin/ruflo.js and @claude-flow/cli/bin/cli.js as published in those versions. */
  wrapperSha256: "af863233c65b825ae38c689f759d9dcbb18528b42771aed4e929ca6d57f21ccd",
  cliSha256: "4ec921923fb00ad86f89b171b0dbc293a1ec613c8ce0a20cbdc8169d4c836e51",
});

/**
 * The reviewed allow-list: the only Ruflo MCP tools ivoai calls. All are ephemeral coordination over
 * JSON files in the runtime subtree; none runs a model, reaches a provider or writes durable memory.
 */
export const RUFLO_REVIEWED_TOOLS = Object.freeze([
  "swarm_init",
  "swarm_status",
  "task_create",
  "task_update",
] as const);
type RufloTool = (typeof RUFLO_REVIEWED_TOOLS)[number];

/** The least-privilege profile Ruflo runs with. Admission refuses any other. */
export interface RufloSafeProfile {
  tools: readonly string[];
  providerExecution: boolean;
  durableMemory: boolean;
}

export const RUFLO_SAFE_PROFILE: RufloSafeProfile = Object.freeze({
  tools: RUFLO_REVIEWED_TOOLS,
  providerExecution: false,
  durableMemory: false,
});

export interface RufloOptions {
  /** Path of the ruflo executable (node_modules/.bin/ruflo or its bin/ruflo.js). */
  command: string;
  /** Parent environment; only PATH, locale and TZ are taken from it. */
  env?: NodeJS.ProcessEnv;
  /** Defaults to {@link RUFLO_SAFE_PROFILE}; anything else fails admission. */
  profile?: RufloSafeProfile;
  /** Per command (default 60 s: a cold first start of Ruflo loads a large module graph). */
  timeoutMs?: number;
  killAfterMs?: number;
  /** Agents the hierarchical swarm allows (default 4: the primary and up to three workers). */
  maxAgents?: number;
  spawn?: Spawn;
}

/** Ruflo's own words for ivoai's task states. */
const RUFLO_STATUS: Record<TaskState, string> = {
  pending: "pending",
  running: "in_progress",
  primary: "in_progress",
  done: "completed",
  failed: "failed",
  skipped: "cancelled",
  cancelled: "cancelled",
};

const SWARM_ID = /^swarm-\d{1,16}-[a-z0-9]{1,12}$/;
const RUFLO_TASK_ID = /^task-\d{1,16}-[a-z0-9]{1,12}$/;

/** Project files ivoai writes for Ruflo: process-local memory, no providers, no background daemon. */
const RUFLO_CONFIG = {
  memory: { backend: "memory" },
  agents: { providers: [] },
  daemon: { autostart: false },
};

/** What would mean Ruflo kept state beyond the process or left something running. */
const DURABLE_TRACES = [".swarm/memory.db", "data", ".claude-flow/daemon.pid"];

const configSchema = z.object({
  "memory.backend": z.literal("memory"),
  "agents.providers": z.array(z.unknown()).length(0),
  "daemon.autostart": z.literal(false),
});
const toolListSchema = z.array(z.object({ name: z.string() })).max(5_000);
const execSchema = z.object({ tool: z.string(), result: z.unknown() });
const ledgerSchema = z.object({
  receipts: z
    .array(z.object({ payload: z.object({ request: z.object({ action: z.object({ tool: z.string() }) }) }) }))
    .max(100_000),
});

/** Where admitted Ruflo commands run: its private directory and the verified wrapper script. */
interface RufloPlace {
  dir: string;
  entry: string;
}

/** One coordinator's state: its settings, the admitted swarm (if any) and ivoai's task ids mapped to Ruflo's. */
interface RufloState {
  readonly options: RufloOptions;
  readonly profile: RufloSafeProfile;
  readonly timeoutMs: number;
  readonly killAfterMs: number;
  readonly maxAgents: number;
  readonly tasks: Map<string, string>;
  admitted: (RufloPlace & { swarmId: string }) | null;
  /** Ruflo's JSON stores have no locks: one command at a time. */
  queue: Promise<unknown>;
}

export function createRufloCoordinator(options: RufloOptions): LifecycleCoordinator {
  const state: RufloState = {
    options,
    profile: options.profile ?? RUFLO_SAFE_PROFILE,
    timeoutMs: options.timeoutMs ?? 60_000,
    killAfterMs: options.killAfterMs ?? 2_000,
    maxAgents: options.maxAgents ?? 4,
    tasks: new Map(),
    admitted: null,
    queue: Promise.resolve(),
  };
  return {
    name: "ruflo",
    admit: (session) => serial(state, () => admit(state, session)),
    registerTask: (id, taskState) => serial(state, () => registerTask(state, id, taskState)),
    updateTask: (id, taskState) => serial(state, () => updateTask(state, id, taskState)),
    close: () => serial(state, () => close(state)),
  };
}

function serial<T>(state: RufloState, work: () => Promise<T>): Promise<T> {
  const next = state.queue.then(work, work);
  state.queue = next.catch(() => {});
  return next;
}

async function admit(state: RufloState, session: CoordinatedSession): Promise<CoordinatorAdmission> {
  if (state.admitted) return { admitted: false, reason: "ruflo coordinator already admitted a session" };
  try {
    return await admitSteps(state, session);
  } catch (error) {
    return { admitted: false, reason: refusal(error) };
  }
}

async function registerTask(state: RufloState, id: string, taskState: TaskState): Promise<void> {
  requireOpaque(id);
  const place = requireAdmitted(state);
  const known = state.tasks.get(id);
  await failLoudly(
    known ? setStatus(state, place, known, taskState) : createTask(state, place, id, taskState),
  );
}

async function updateTask(state: RufloState, id: string, taskState: TaskState): Promise<void> {
  requireOpaque(id);
  const place = requireAdmitted(state);
  const known = state.tasks.get(id);
  if (!known) throw new IvoaiError("NOT_FOUND", `task ${id} was never registered with ruflo`);
  await failLoudly(setStatus(state, place, known, taskState));
}

async function close(state: RufloState): Promise<void> {
  const current = state.admitted;
  state.admitted = null;
  state.tasks.clear();
  // The swarm and its tasks live only in this subtree: removing it ends them.
  if (current) await fs.rm(current.dir, { recursive: true, force: true }).catch(() => {});
}

function requireAdmitted(state: RufloState): RufloPlace {
  if (!state.admitted) throw new IvoaiError("USAGE", "the ruflo coordinator has not admitted a session");
  return state.admitted;
}

function requireOpaque(id: string): void {
  if (!isOpaqueTaskId(id))
    throw new IvoaiError("USAGE", "ruflo takes opaque task ids only (see opaqueTaskId)");
}

/** The seed's admission checks in order; any failure throws, and the caller turns it into a refusal. */
async function admitSteps(state: RufloState, session: CoordinatedSession): Promise<CoordinatorAdmission> {
  checkProfile(state.profile);
  const place: RufloPlace = {
    dir: await prepareDir(session.runtimeDir),
    entry: await checkRufloIntegrity(state.options.command),
  };
  await checkInstall(state, place);
  const swarmId = await initSwarm(state, place);
  await createTask(state, place, opaqueTaskId(session.sessionId, PRIMARY_TASK_KEY), "primary");
  await checkAftermath(place.dir, state.profile.tools);
  state.admitted = { ...place, swarmId };
  return {
    admitted: true,
    reason: `ruflo ${RUFLO_PIN.version} admitted: hierarchical swarm ${swarmId}, primary task registered`,
    swarmId,
  };
}

/** The pinned version, a provider-less configuration and every allow-listed tool shipped. */
async function checkInstall(state: RufloState, place: RufloPlace): Promise<void> {
  const version = (await runCommand(state, place, ["--version"])).trim();
  if (version !== `ruflo v${RUFLO_PIN.version}`)
    throw new RufloCommandError(`ruflo --version said ${JSON.stringify(oneLine(version, 60))}`);
  const config = configSchema.safeParse(
    trailingJson(await runCommand(state, place, ["config", "get", "--format", "json"]), "config get"),
  );
  if (!config.success)
    throw new RufloCommandError(
      "ruflo configuration is not provider-less with process-local memory and no daemon",
    );
  const shipped = toolListSchema.safeParse(
    trailingJson(await runCommand(state, place, ["mcp", "tools", "--format", "json"]), "mcp tools"),
  );
  if (!shipped.success) throw new RufloCommandError("ruflo mcp tools: unexpected list");
  const names = new Set(shipped.data.map((tool) => tool.name));
  const missing = state.profile.tools.filter((tool) => !names.has(tool));
  if (missing.length > 0)
    throw new RufloCommandError(`ruflo does not ship the allow-listed tools ${missing.join(", ")}`);
}

/** A hierarchical swarm, confirmed running by Ruflo itself; returns its id. */
async function initSwarm(state: RufloState, place: RufloPlace): Promise<string> {
  const init = await callTool(state, place, "swarm_init", {
    topology: "hierarchical",
    maxAgents: state.maxAgents,
  });
  const swarmId = init.swarmId;
  if (typeof swarmId !== "string" || !SWARM_ID.test(swarmId) || init.topology !== "hierarchical")
    throw new RufloCommandError("ruflo swarm_init: no hierarchical swarm id");
  const status = await callTool(state, place, "swarm_status", { swarmId });
  if (status.swarmId !== swarmId || status.topology !== "hierarchical" || status.status !== "running")
    throw new RufloCommandError(`ruflo swarm_status does not confirm swarm ${swarmId}`);
  return swarmId;
}

async function runCommand(state: RufloState, place: RufloPlace, args: string[]): Promise<string> {
  const { options } = state;
  const result = await runRuflo({
    entry: place.entry,
    args,
    cwd: place.dir,
    env: rufloEnv(options.env ?? process.env, place.dir, state.profile.tools),
    ioDir: path.join(place.dir, ".ivoai"),
    timeoutMs: state.timeoutMs,
    killAfterMs: state.killAfterMs,
    ...(options.spawn ? { spawn: options.spawn } : {}),
  });
  return result.stdout;
}

/** Calls one allow-listed MCP tool through `ruflo mcp exec` and returns its result object. */
async function callTool(
  state: RufloState,
  place: RufloPlace,
  tool: RufloTool,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!state.profile.tools.includes(tool) || !(RUFLO_REVIEWED_TOOLS as readonly string[]).includes(tool))
    throw new RufloCommandError(`ruflo tool ${tool} is outside the safe profile`);
  const args = ["mcp", "exec", "--tool", tool, "--params", JSON.stringify(params), "--format", "json"];
  const parsed = execSchema.safeParse(trailingJson(await runCommand(state, place, args), commandLabel(args)));
  const result = parsed.success ? parsed.data.result : undefined;
  if (!parsed.success || parsed.data.tool !== tool || typeof result !== "object" || result === null)
    throw new RufloCommandError(`ruflo ${tool}: unexpected result shape`);
  const record = result as Record<string, unknown>;
  if (record.success === false)
    throw new RufloCommandError(`ruflo ${tool}: ${oneLine(String(record.error ?? "failed"))}`);
  return record;
}

async function createTask(
  state: RufloState,
  place: RufloPlace,
  id: string,
  taskState: TaskState,
): Promise<void> {
  const created = await callTool(state, place, "task_create", {
    type: "ivoai",
    description: id,
    tags: ["ivoai"],
  });
  const rufloId = created.taskId;
  if (typeof rufloId !== "string" || !RUFLO_TASK_ID.test(rufloId) || created.description !== id)
    throw new RufloCommandError("ruflo task_create: no verifiable task id");
  state.tasks.set(id, rufloId);
  if (RUFLO_STATUS[taskState] !== "pending") await setStatus(state, place, rufloId, taskState);
}

async function setStatus(
  state: RufloState,
  place: RufloPlace,
  rufloId: string,
  taskState: TaskState,
): Promise<void> {
  const status = RUFLO_STATUS[taskState];
  const updated = await callTool(state, place, "task_update", { taskId: rufloId, status });
  if (updated.taskId !== rufloId || updated.status !== status)
    throw new RufloCommandError(`ruflo task_update: state ${status} not confirmed`);
}

function checkProfile(profile: RufloSafeProfile): void {
  if (profile.providerExecution !== false)
    throw new RufloCommandError("ruflo safe profile enables provider execution");
  if (profile.durableMemory !== false)
    throw new RufloCommandError("ruflo safe profile enables durable memory");
  const reviewed = new Set<string>(RUFLO_REVIEWED_TOOLS);
  const extra = profile.tools.filter((tool) => !reviewed.has(tool));
  const missing = RUFLO_REVIEWED_TOOLS.filter((tool) => !profile.tools.includes(tool));
  if (extra.length > 0 || missing.length > 0 || new Set(profile.tools).size !== profile.tools.length) {
    const diff = [...extra.map((tool) => `+${tool}`), ...missing.map((tool) => `-${tool}`)];
    throw new RufloCommandError(
      `ruflo safe profile does not match the reviewed allow-list (${diff.join(", ") || "duplicates"})`,
    );
  }
}

/** A fresh 0700 `ruflo` directory below the session's runtime directory (cwd and HOME of every command). */
async function prepareDir(runtimeDir: string): Promise<string> {
  if (!path.isAbsolute(runtimeDir)) throw new RufloCommandError("session runtime directory is not absolute");
  const parent = await fs.lstat(runtimeDir);
  if (!parent.isDirectory()) throw new RufloCommandError("session runtime directory is not a directory");
  const dir = path.join(runtimeDir, "ruflo");
  await fs.rm(dir, { recursive: true, force: true });
  for (const sub of [dir, path.join(dir, "tmp"), path.join(dir, ".ivoai")]) {
    await fs.mkdir(sub, { mode: 0o700 });
    await fs.chmod(sub, 0o700);
  }
  await writeFileAtomic(path.join(dir, "claude-flow.config.json"), `${JSON.stringify(RUFLO_CONFIG)}\n`);
  return dir;
}

/**
 * The integrity half of the version/integrity check: the command must be the pinned wrapper, and the CLI
 * package it loads (found the way the wrapper finds it) must be the pinned one, byte for byte at both
 * entry points. Returns the wrapper script to run.
 */
export async function checkRufloIntegrity(command: string): Promise<string> {
  const entry = await fs.realpath(command).catch(() => {
    throw new RufloCommandError(`ruflo executable ${command} does not exist`);
  });
  const pkgDir = path.dirname(path.dirname(entry));
  await expectPackage(pkgDir, "ruflo", RUFLO_PIN.version);
  if (sha256(await fs.readFile(entry)) !== RUFLO_PIN.wrapperSha256)
    throw new RufloCommandError("ruflo wrapper does not match the reviewed release");
  let dir = pkgDir;
  for (let depth = 0; depth < 10; depth++) {
    const cliDir = path.join(dir, "node_modules", ...RUFLO_PIN.cliPackage.split("/"));
    const cli = await fs.readFile(path.join(cliDir, "bin", "cli.js")).catch(() => null);
    if (cli) {
      await expectPackage(cliDir, RUFLO_PIN.cliPackage, RUFLO_PIN.cliVersion);
      if (sha256(cli) !== RUFLO_PIN.cliSha256)
        throw new RufloCommandError(`${RUFLO_PIN.cliPackage} does not match the reviewed release`);
      return entry;
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  throw new RufloCommandError(`ruflo cannot find ${RUFLO_PIN.cliPackage}`);
}

async function expectPackage(dir: string, name: string, version: string): Promise<void> {
  const pkg = await fs
    .readFile(path.join(dir, "package.json"), "utf8")
    .then((text) => JSON.parse(text) as { name?: unknown; version?: unknown })
    .catch(() => ({}) as { name?: unknown; version?: unknown });
  if (pkg.name !== name || pkg.version !== version)
    throw new RufloCommandError(
      `${name} ${String(pkg.version ?? "?")} is installed, ${version} is the reviewed release`,
    );
}

/** After admission's commands: nothing durable, no daemon, and Ruflo's own ledger shows only allowed tools. */
async function checkAftermath(dir: string, tools: readonly string[]): Promise<void> {
  for (const trace of DURABLE_TRACES) {
    const exists = await fs.lstat(path.join(dir, trace)).then(
      () => true,
      () => false,
    );
    if (exists) throw new RufloCommandError(`ruflo left ${trace} behind (durable state or a daemon)`);
  }
  const ledgerFile = path.join(dir, ".claude-flow", "policy", "state.json");
  const stat = await fs.stat(ledgerFile).catch(() => null);
  if (!stat || stat.size > 8 * 1024 * 1024) throw new RufloCommandError("ruflo policy ledger is missing");
  let ledger: z.infer<typeof ledgerSchema>;
  try {
    ledger = ledgerSchema.parse(JSON.parse(await fs.readFile(ledgerFile, "utf8")));
  } catch {
    throw new RufloCommandError("ruflo policy ledger is unreadable");
  }
  const called = new Set(ledger.receipts.map((receipt) => receipt.payload.request.action.tool));
  const outside = [...called].filter((tool) => !tools.includes(tool));
  if (outside.length > 0 || called.size === 0)
    throw new RufloCommandError(
      `ruflo policy ledger shows tools outside the safe profile: ${outside.join(", ") || "none recorded"}`,
    );
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function refusal(error: unknown): string {
  if (error instanceof RufloCommandError || error instanceof IvoaiError) return oneLine(error.message);
  return `ruflo admission failed: ${oneLine(error instanceof Error ? error.message : String(error))}`;
}

async function failLoudly(work: Promise<void>): Promise<void> {
  try {
    await work;
  } catch (error) {
    if (error instanceof RufloCommandError) throw new IvoaiError("INTERNAL", error.message, { cause: error });
    throw error;
  }
}
