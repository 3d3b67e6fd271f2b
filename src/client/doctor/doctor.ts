// `ivoai doctor`: a runtime component matrix (installed, available, healthy as separate facts; unknown
// without evidence), file permissions and each server's reachability, TLS and protocol. Never a secret.
import { promises as fs } from "node:fs";
import path from "node:path";
import { checkNativeSqlite, type NativeSqliteHealth } from "../../shared/native-sqlite.js";
import { withTimeout } from "../../shared/timeout.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { type AgentName, locateAgent, loginStatus } from "../agents/catalog.js";
import { firstLine, runProbe, timedOutAfter } from "../components/probe.js";
import { DEFAULT_PROBE_TIMEOUT_MS } from "../components/selection.js";
import { discover } from "../connections/connect.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import {
  buildMatrix,
  type CoordinatorProbe,
  type MatrixRow,
  matrixVerdict,
  type UserServerProbe,
} from "./matrix.js";
import { componentNext, fileNext, reportNext, serverNext } from "./next-steps.js";

export type Fact = "yes" | "no" | "unknown";

export interface ComponentRow {
  component: string;
  /** For agent CLIs: what their own status command says (unknown when it cannot tell). */
  logged_in?: "logged_in" | "logged_out" | "unknown";
  /** What the status command said besides the state (method, plan; never an address), or why it said nothing. */
  login_detail?: string;
  installed: Fact;
  available: Fact;
  healthy: Fact;
  version: string | null;
  path: string | null;
  detail: string;
}

export interface ServerRow {
  alias: string;
  id: string;
  purpose: string;
  enabled: boolean;
  credential_stored: boolean;
  reachable: Fact;
  readiness: string;
  tls: "valid" | "plaintext-loopback" | "invalid" | "unknown";
  protocol_version: number | null;
  /** What its discovery document says it serves (null when it was not reached). */
  features: { context: boolean; memory: boolean } | null;
  detail: string;
}

export interface FileRow {
  path: string;
  expected: string;
  actual: string;
  ok: boolean;
}

/** A row with what to do about it (null when it is fine). */
export type WithNext<Row> = Row & { next: string | null };

export interface DoctorReport {
  status: "ok" | "warn" | "fail";
  components: WithNext<ComponentRow>[];
  files: WithNext<FileRow>[];
  servers: WithNext<ServerRow>[];
  /** One row per component: supported or not, healthy, which implementation is active and why. */
  matrix: MatrixRow[];
  /** Every row's next step, naming the row, plus how to connect a first server when there is none. */
  next: string[];
}

const AGENTS = ["codex", "claude", "opencode"] as const;

/** An agent CLI where a launch finds it (PATH, then the managed bin), whether --version answers in time. */
async function componentRow(
  name: AgentName,
  managedBin: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ComponentRow> {
  const found = await locateAgent(name, managedBin, env);
  if (!found) {
    return {
      component: name,
      installed: "no",
      available: "no",
      healthy: "unknown",
      version: null,
      path: null,
      detail: `not found on PATH nor in ${managedBin}`,
    };
  }
  const probed = await runProbe(found.path, ["--version"], {
    timeoutMs,
    env: { PATH: env.PATH ?? "", HOME: env.HOME ?? "" },
  });
  if (!probed.ok)
    return {
      component: name,
      installed: "yes",
      available: "no",
      healthy: "no",
      version: null,
      path: found.path,
      detail: `--version ${probed.reason}`,
    };
  // Running --version shows it starts; whether it is logged in or works is not known from that.
  return {
    component: name,
    installed: "yes",
    available: "yes",
    healthy: "unknown",
    version: firstLine(probed.stdout) || null,
    path: found.path,
    detail: found.managed ? "managed" : "pre-existing",
  };
}

async function fileRow(file: string, expectedMode: number, required: boolean): Promise<FileRow | undefined> {
  try {
    const stat = await fs.lstat(file);
    const mode = stat.mode & 0o777;
    return {
      path: file,
      expected: expectedMode.toString(8).padStart(4, "0"),
      actual: stat.isSymbolicLink() ? "symlink" : mode.toString(8).padStart(4, "0"),
      ok: !stat.isSymbolicLink() && (mode & ~expectedMode) === 0,
    };
  } catch {
    return required
      ? { path: file, expected: expectedMode.toString(8).padStart(4, "0"), actual: "absent", ok: false }
      : undefined;
  }
}

/** better-sqlite3's addon, loaded for real: built for another Node.js ABI it is unhealthy with the fix to run. */
function nativeSqliteRow(health: NativeSqliteHealth): ComponentRow {
  return health.healthy
    ? {
        component: "native-sqlite",
        installed: "yes",
        available: "yes",
        healthy: "yes",
        version: health.version,
        path: health.path,
        detail: `better-sqlite3 loads on Node.js ABI ${process.versions.modules}`,
      }
    : {
        component: "native-sqlite",
        installed: "yes",
        available: "no",
        healthy: "no",
        version: null,
        path: health.path,
        detail: health.message,
      };
}

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  /** The bound of every external probe (--probe-timeout; default 5 s). */
  probeTimeoutMs?: number;
  /** The user's MCP servers, each with its probe (the MCP registry provides them). */
  userServers?: readonly UserServerProbe[];
  /** Overrides doctor's own look at `[auto] coordinator` and ruflo. */
  coordinator?: CoordinatorProbe;
}

async function agentRows(
  managedBin: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<ComponentRow[]> {
  return Promise.all(
    AGENTS.map(async (name) => {
      const row = await componentRow(name, managedBin, env, timeoutMs);
      if (row.available !== "yes" || !row.path || name === "opencode") return row;
      const status = await loginStatus(
        { name, path: row.path, managed: row.detail === "managed" },
        env,
        timeoutMs,
      );
      return { ...row, logged_in: status.state, ...(status.detail ? { login_detail: status.detail } : {}) };
    }),
  );
}

async function serverRow(
  profile: { alias: string; id: string; purpose: string; enabled: boolean; url: string },
  credentialStored: boolean,
  timeoutMs: number,
): Promise<ServerRow> {
  const base = {
    alias: profile.alias,
    id: profile.id,
    purpose: profile.purpose,
    enabled: profile.enabled,
    credential_stored: credentialStored,
  };
  const plaintext = profile.url.startsWith("http:");
  try {
    const found = await withTimeout(discover(profile.url, timeoutMs), timeoutMs, timedOutAfter(timeoutMs));
    return {
      ...base,
      reachable: "yes",
      readiness: found.readiness,
      tls: plaintext ? "plaintext-loopback" : "valid",
      protocol_version: found.discovery.protocol_version,
      features: { context: found.discovery.features.context, memory: found.discovery.features.memory },
      detail: found.degraded.length ? `degraded: ${found.degraded.join(", ")}` : "",
    };
  } catch (error) {
    const raw = (error as Error).message;
    const message = / did not answer within \d+ ms/.test(raw) ? timedOutAfter(timeoutMs) : raw;
    return {
      ...base,
      reachable: /TLS|speaks protocol/.test(message) ? "yes" : "no",
      readiness: "unknown",
      tls: /TLS/.test(message) ? "invalid" : "unknown",
      protocol_version: null,
      features: null,
      detail: message,
    };
  }
}

export async function runDoctor(
  registry: ConnectionRegistry,
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const timeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const managedBin = path.join(registry.paths.dataDir, "bin");
  const nativeSqlite = checkNativeSqlite();
  const agents = await agentRows(managedBin, env, timeoutMs);
  const components: ComponentRow[] = [
    {
      component: "node",
      installed: "yes",
      available: "yes",
      healthy: "yes",
      version: process.version,
      path: process.execPath,
      detail: "runtime",
    },
    {
      component: "ivoai",
      installed: "yes",
      available: "yes",
      healthy: "yes",
      version: IVOAI_VERSION,
      path: process.argv[1] ?? null,
      detail: "this program",
    },
    nativeSqliteRow(nativeSqlite),
    ...agents,
  ];
  const files = (
    await Promise.all([
      fileRow(registry.paths.configDir, 0o700, false),
      fileRow(registry.paths.configFile, 0o600, false),
      fileRow(registry.paths.secretsFile, 0o600, false),
    ])
  ).filter((row): row is FileRow => row !== undefined);
  const { profiles, secrets } = await registry.read();
  const servers = await Promise.all(
    profiles.map((profile) =>
      serverRow(profile, Boolean(secrets.servers[profile.id]?.credential), timeoutMs),
    ),
  );
  const urls = new Map(profiles.map((profile) => [profile.id, profile.url]));
  const matrix = await buildMatrix({
    agents,
    nativeSqlite,
    servers: servers.map((row) => ({ row, url: urls.get(row.id) ?? "URL" })),
    managedBin,
    stateDir: registry.paths.stateDir,
    configFile: registry.paths.configFile,
    env,
    timeoutMs,
    userServers: options.userServers ?? [],
    ...(options.coordinator ? { coordinator: options.coordinator } : {}),
  });
  const verdict = matrixVerdict(matrix);
  const failing = verdict === "fail" || files.some((row) => !row.ok);
  const warning =
    verdict === "warn" ||
    servers.some((row) => row.readiness === "ready_degraded") ||
    components.some((row) => row.installed === "no");
  const report = {
    components: components.map((row) => ({ ...row, next: componentNext(row) })),
    files: files.map((row) => ({ ...row, next: fileNext(row) })),
    servers: servers.map((row) => ({ ...row, next: serverNext(row, urls.get(row.id) ?? "URL") })),
  };
  // The unhealthy rows no component, file or server row covers add their own next step (optional ones that are
  // merely absent keep theirs on the row).
  const covered = /^(native-sqlite|agent:|server:|knowledge$)/;
  const extra = matrix
    .filter((row) => row.next && row.healthy === "no" && !covered.test(row.component))
    .map((row) => `${row.component}: ${row.next}`);
  return {
    status: failing ? "fail" : warning ? "warn" : "ok",
    ...report,
    matrix,
    next: [...reportNext(AGENTS, report.components, report.files, report.servers), ...extra],
  };
}
