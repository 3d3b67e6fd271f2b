// Doctor's component matrix (seed 000: "Doctor constrói uma matriz de componentes … para que futuras seleções e
// fallbacks possam explicar qual implementação está ativa e por quê"): one row per component, built from the same
// selection code the launchers and AUTO run (components/selection.ts), every external probe bounded.
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SKILL_DIGEST, SKILL_NAME, skillDigest } from "../../protocol/skill-bundle.js";
import { errnoCode } from "../../shared/errors.js";
import type { NativeSqliteHealth } from "../../shared/native-sqlite.js";
import { withTimeout } from "../../shared/timeout.js";
import { readAutoSettings } from "../auto/settings.js";
import { timedOutAfter } from "../components/probe.js";
import { type CoordinatorSetting, selectCompression, selectCoordinator } from "../components/selection.js";
import type { ComponentRow, ServerRow } from "./doctor.js";
import {
  agentMatrixRow,
  compressionMatrixRows,
  coordinatorMatrixRow,
  knowledgeMatrixRows,
  type MatrixRow,
  nativeSqliteMatrixRow,
  type SkillCheck,
  serverMatrixRow,
  skillsMatrixRow,
  storeMatrixRow,
  type UserServerOutcome,
  userServerMatrixRow,
} from "./matrix-rows.js";

export type { MatrixRow, MatrixStatus } from "./matrix-rows.js";

/** A user-added MCP server as doctor probes it (initialize, tools/list, time); the MCP registry provides these. */
export interface UserServerProbe {
  name: string;
  enabled?: boolean;
  required?: boolean;
  probe(): Promise<{
    ok: boolean;
    tools: string[];
    hidden: string[];
    missing: string[];
    ms: number;
    error?: string;
  }>;
}

/** What another part may say about the coordinator instead of doctor's own look at `[auto] coordinator`. */
export type CoordinatorProbe = () => Promise<{
  implementation: "ruflo" | "none";
  active: boolean;
  why: string;
  ok: boolean;
  version: string | null;
}>;

export interface MatrixInput {
  /** Doctor's agent rows (installed, --version, login), already probed. */
  agents: readonly (ComponentRow & { login_detail?: string })[];
  nativeSqlite: NativeSqliteHealth;
  /** Doctor's server rows, already probed, with each profile's URL. */
  servers: readonly { row: ServerRow; url: string }[];
  managedBin: string;
  stateDir: string;
  configFile: string;
  env: NodeJS.ProcessEnv;
  /** The bound of every external probe (--probe-timeout). */
  timeoutMs: number;
  userServers: readonly UserServerProbe[];
  coordinator?: CoordinatorProbe;
  /** Where the ivoai package is looked for (tests); default: upwards from this module. */
  packageFrom?: string;
}

/** Every row, in a fixed order: runtime, agents, knowledge, optional components, servers, user servers. */
export async function buildMatrix(input: MatrixInput): Promise<MatrixRow[]> {
  const knowledgeActive = input.servers.some(({ row }) => row.enabled && row.readiness !== "unknown");
  const compression = (requested: "direct" | "caveman" | "headroom") =>
    selectCompression({
      agent: "codex",
      knowledgeActive: requested === "direct" ? knowledgeActive : false,
      requested,
      managedBin: input.managedBin,
      timeoutMs: input.timeoutMs,
      env: input.env,
    });
  const [chosen, caveman, headroom, coordinator, skill, store, users] = await Promise.all([
    compression("direct"),
    compression("caveman"),
    compression("headroom"),
    coordinatorRow(input),
    checkSkill(input.packageFrom ?? path.dirname(fileURLToPath(import.meta.url))),
    storeState(path.join(input.stateDir, "sessions"), input.stateDir),
    Promise.all(input.userServers.map((server) => probeUserServer(server, input.timeoutMs))),
  ]);
  return [
    nativeSqliteMatrixRow(input.nativeSqlite),
    ...input.agents.map(agentMatrixRow),
    storeMatrixRow(path.join(input.stateDir, "sessions"), store),
    ...knowledgeMatrixRows(input.servers.map(({ row }) => row)),
    ...compressionMatrixRows(chosen, [caveman, headroom], input.managedBin),
    coordinator,
    skillsMatrixRow(skill, SKILL_DIGEST),
    ...input.servers.map(({ row, url }) => serverMatrixRow(row, url)),
    ...users.map(userServerMatrixRow),
  ];
}

/** The overall verdict of the rows: fail when a required row is unhealthy, warn when any row is. */
export function matrixVerdict(rows: readonly MatrixRow[]): "ok" | "warn" | "fail" {
  if (rows.some((row) => row.required && row.healthy === "no")) return "fail";
  return rows.some((row) => row.healthy === "no") ? "warn" : "ok";
}

async function coordinatorRow(input: MatrixInput): Promise<MatrixRow> {
  if (input.coordinator) {
    try {
      return coordinatorMatrixRow(
        await withTimeout(input.coordinator(), input.timeoutMs, timedOutAfter(input.timeoutMs)),
      );
    } catch (error) {
      return coordinatorMatrixRow({
        implementation: "none",
        active: false,
        ok: false,
        version: null,
        why: (error as Error).message,
      });
    }
  }
  let setting: CoordinatorSetting;
  try {
    setting = (await readAutoSettings(input.configFile)).coordinator;
  } catch (error) {
    return coordinatorMatrixRow({
      implementation: "none",
      active: false,
      ok: false,
      version: null,
      why: (error as Error).message,
    });
  }
  return coordinatorMatrixRow(
    await selectCoordinator({
      setting,
      managedBin: input.managedBin,
      env: input.env,
      probeVersion: { timeoutMs: input.timeoutMs },
    }),
  );
}

async function probeUserServer(server: UserServerProbe, timeoutMs: number): Promise<UserServerOutcome> {
  const required = server.required ?? false;
  if (server.enabled === false) return { name: server.name, enabled: false, required };
  try {
    const result = await withTimeout(server.probe(), timeoutMs, timedOutAfter(timeoutMs));
    return { name: server.name, enabled: true, required, ...result };
  } catch (error) {
    const failed = { ok: false, tools: [], hidden: [], missing: [], ms: timeoutMs };
    return { name: server.name, enabled: true, required, ...failed, error: (error as Error).message };
  }
}

/**
 * The packaged skill: skills/ivoai-memory-context/SKILL.md in the ivoai package (the folder holding its
 * package.json: dist/.. once installed, the repository in a checkout), compared with the compiled one.
 */
export async function checkSkill(from: string): Promise<SkillCheck> {
  const root = await packageRoot(from);
  if (!root) return { found: false, file: null };
  const file = path.join(root, "skills", SKILL_NAME, "SKILL.md");
  try {
    const digest = skillDigest(await fs.readFile(file, "utf8"));
    return { found: true, file, digest, matches: digest === SKILL_DIGEST };
  } catch {
    return { found: false, file };
  }
}

async function packageRoot(from: string): Promise<string | undefined> {
  for (let dir = path.resolve(from); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(await fs.readFile(path.join(dir, "package.json"), "utf8")) as { name?: unknown };
      if (pkg.name === "ivoai") return dir;
    } catch {
      // not here
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

async function storeState(dir: string, stateDir: string): Promise<"writable" | "absent" | string> {
  for (const candidate of [dir, stateDir]) {
    try {
      await fs.access(candidate, fs.constants.W_OK);
      return "writable";
    } catch (error) {
      if (errnoCode(error) !== "ENOENT")
        return `${candidate}: ${errnoCode(error) ?? (error as Error).message}`;
    }
  }
  return "absent";
}
