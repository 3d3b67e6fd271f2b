// `ivoai doctor`: a runtime component matrix (installed, available, healthy as separate facts; unknown
// without evidence), file permissions and each server's reachability, TLS and protocol. Never a secret.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { checkNativeSqlite } from "../../shared/native-sqlite.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import { loginStatus } from "../agents/catalog.js";
import { discover } from "../connections/connect.js";
import type { ConnectionRegistry } from "../connections/registry.js";
import { componentNext, fileNext, reportNext, serverNext } from "./next-steps.js";

export type Fact = "yes" | "no" | "unknown";

export interface ComponentRow {
  component: string;
  /** For agent CLIs: what their own status command says (unknown when it cannot tell). */
  logged_in?: "logged_in" | "logged_out" | "unknown";
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
  /** Every row's next step, naming the row, plus how to connect a first server when there is none. */
  next: string[];
}

const AGENTS = ["codex", "claude", "opencode"] as const;

async function which(name: string, extraDirs: readonly string[]): Promise<string | null> {
  for (const dir of [...extraDirs, ...(process.env.PATH ?? "").split(path.delimiter)]) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      await fs.access(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

async function componentRow(name: string, managedBin: string): Promise<ComponentRow> {
  const found = await which(name, [managedBin]);
  if (!found) {
    return {
      component: name,
      installed: "no",
      available: "no",
      healthy: "unknown",
      version: null,
      path: null,
      detail: "not found on PATH",
    };
  }
  try {
    const { stdout } = await promisify(execFile)(found, ["--version"], {
      timeout: 5_000,
      env: { PATH: process.env.PATH ?? "" },
    });
    const version = stdout.trim().split("\n")[0] ?? "";
    // Running --version shows it starts; whether it is logged in or works is not known from that.
    return {
      component: name,
      installed: "yes",
      available: "yes",
      healthy: "unknown",
      version,
      path: found,
      detail: found.startsWith(managedBin) ? "managed" : "pre-existing",
    };
  } catch (error) {
    return {
      component: name,
      installed: "yes",
      available: "no",
      healthy: "no",
      version: null,
      path: found,
      detail: `--version failed: ${(error as Error).message.split("\n")[0]}`,
    };
  }
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
function nativeSqliteRow(): ComponentRow {
  const health = checkNativeSqlite();
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

export async function runDoctor(registry: ConnectionRegistry): Promise<DoctorReport> {
  const managedBin = path.join(registry.paths.dataDir, "bin");
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
    nativeSqliteRow(),
    ...(await Promise.all(
      AGENTS.map(async (name) => {
        const row = await componentRow(name, managedBin);
        if (row.available !== "yes" || !row.path || name === "opencode") return row;
        const status = await loginStatus({ name, path: row.path, managed: row.detail === "managed" });
        return { ...row, logged_in: status.state };
      }),
    )),
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
    profiles.map(async (profile): Promise<ServerRow> => {
      const base = {
        alias: profile.alias,
        id: profile.id,
        purpose: profile.purpose,
        enabled: profile.enabled,
        credential_stored: Boolean(secrets.servers[profile.id]?.credential),
      };
      const plaintext = profile.url.startsWith("http:");
      try {
        const found = await discover(profile.url);
        return {
          ...base,
          reachable: "yes",
          readiness: found.readiness,
          tls: plaintext ? "plaintext-loopback" : "valid",
          protocol_version: found.discovery.protocol_version,
          detail: found.degraded.length ? `degraded: ${found.degraded.join(", ")}` : "",
        };
      } catch (error) {
        const message = (error as Error).message;
        return {
          ...base,
          reachable: /TLS/.test(message) ? "yes" : "no",
          readiness: "unknown",
          tls: /TLS/.test(message) ? "invalid" : "unknown",
          protocol_version: null,
          detail: message,
        };
      }
    }),
  );
  const failing =
    components.some((row) => row.component === "native-sqlite" && row.healthy === "no") ||
    files.some((row) => !row.ok) ||
    servers.some((row) => row.enabled && row.readiness === "unknown");
  const warning =
    servers.some((row) => row.readiness === "ready_degraded") ||
    components.some((row) => row.installed === "no");
  const urls = new Map(profiles.map((profile) => [profile.id, profile.url]));
  const report = {
    components: components.map((row) => ({ ...row, next: componentNext(row) })),
    files: files.map((row) => ({ ...row, next: fileNext(row) })),
    servers: servers.map((row) => ({ ...row, next: serverNext(row, urls.get(row.id) ?? "URL") })),
  };
  return {
    status: failing ? "fail" : warning ? "warn" : "ok",
    ...report,
    next: reportNext(AGENTS, report.components, report.files, report.servers),
  };
}
