// Read-only server diagnostics: permissions, listener and TLS facts, never a secret value.
import { X509Certificate } from "node:crypto";
import { existsSync, promises as fs } from "node:fs";
import type { ServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode } from "../../shared/errors.js";
import type { VectorRetriever } from "../context/vectors.js";
import type { ListenerMode } from "../http/listener-policy.js";
import type { MemoryVectors } from "../memory/vectors.js";
import { postgresUrlFile, readPostgresUrl, type StoreDomain, sqliteFileOf } from "../store/backend.js";
import {
  type AppliedMigration,
  type Migration,
  readAppliedSqlite,
  type SchemaStanding,
  schemaStanding,
} from "../store/migrations.js";
import { checkEmbedder, checkMemoryRanking } from "./doctor-embedder.js";

export interface DoctorCheck {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
}

interface ModeRule {
  name: string;
  path: string;
  /** Bits that must be clear, e.g. 0o077 for "owner only". */
  forbidden: number;
  required: boolean;
}

/** A store as the doctor checks it: its name and this build's migrations (the composition root's list). */
export interface DoctorStore {
  domain: StoreDomain;
  migrations: readonly Migration[];
}

export async function runServerDoctor(input: {
  paths: ServerPaths;
  config: ServerConfig;
  listenerMode: ListenerMode;
  now: Date;
  /** Every SQL store (src/server/stores.ts): each one's schema is checked against this build. */
  stores: readonly DoctorStore[];
  /** The running context service's vector index, when one is mounted. */
  vectors?: VectorRetriever | undefined;
  /** The running memory service's vectors (undefined: lexical), when memory is mounted. */
  memory?: { open: boolean; vectors: MemoryVectors | undefined };
}): Promise<DoctorCheck[]> {
  const { paths, config } = input;
  const rules: ModeRule[] = [
    { name: "config_file", path: paths.configFile, forbidden: 0o022, required: true },
    { name: "secrets_dir", path: paths.secretsDir, forbidden: 0o077, required: true },
    { name: "tls_dir", path: paths.tlsDir, forbidden: 0o077, required: false },
    { name: "tls_key", path: paths.tlsKey, forbidden: 0o077, required: config.server.tls },
    { name: "tls_cert", path: paths.tlsCert, forbidden: 0o077, required: config.server.tls },
    { name: "enrollment_dir", path: paths.enrollmentDir, forbidden: 0o077, required: true },
    ...(config.store.backend === "sqlite"
      ? [
          {
            name: "enrollment_store",
            path: sqliteFileOf(paths, "enrollment"),
            forbidden: 0o077,
            required: false,
          },
        ]
      : [{ name: "postgres_url", path: postgresUrlFile(paths), forbidden: 0o077, required: true }]),
  ];
  const checks = await Promise.all(rules.map(checkMode));
  checks.push(await checkStore(paths, config));
  checks.push(await checkSchemas(paths, config, input.stores));
  checks.push(await checkEmbedder(config.context.embedder, input.vectors));
  if (input.memory) checks.push(checkMemoryRanking(config, input.memory.vectors, input.memory.open));
  checks.push({ name: "listener", status: "ok", detail: `${input.listenerMode} on ${config.server.listen}` });
  if (config.server.tls) checks.push(await checkCertificate(paths.tlsCert, input.now));
  return checks;
}

/** Where the stores live; for PostgreSQL where it points (never the password) and whether it answers. */
async function checkStore(paths: ServerPaths, config: ServerConfig): Promise<DoctorCheck> {
  if (config.store.backend === "sqlite")
    return { name: "store", status: "ok", detail: "sqlite (files under var/lib/ivoai)" };
  try {
    const { checkPostgres, describePostgresUrl } = await import("../store/postgres.js");
    const url = await readPostgresUrl(paths);
    const target = describePostgresUrl(url);
    const where = `postgres ${target.user}@${target.host}:${target.port}/${target.database}`;
    try {
      const { server_version: version } = await checkPostgres(url, 3000);
      return { name: "store", status: "ok", detail: `${where} (server ${version})` };
    } catch (error) {
      return { name: "store", status: "fail", detail: `${where}: ${(error as Error).message}` };
    }
  } catch (error) {
    return { name: "store", status: "fail", detail: (error as Error).message };
  }
}

/**
 * Each store's schema against this build's migrations, as a start would judge it: fail when one is newer than this
 * build or had a released migration edited (the server would refuse to start); a store behind is migrated at start.
 */
async function checkSchemas(
  paths: ServerPaths,
  config: ServerConfig,
  stores: readonly DoctorStore[],
): Promise<DoctorCheck> {
  let applied: Map<StoreDomain, AppliedMigration[] | undefined>;
  try {
    applied = await appliedMigrations(paths, config, stores);
  } catch (error) {
    return { name: "store_schema", status: "fail", detail: (error as Error).message };
  }
  const dialect = config.store.backend;
  const standings = stores.map((store) => ({
    domain: store.domain,
    standing: schemaStanding(store.migrations, dialect, applied.get(store.domain)),
  }));
  const failed = standings.filter(
    ({ standing }) => standing.state === "newer" || standing.state === "edited",
  );
  return {
    name: "store_schema",
    status: failed.length > 0 ? "fail" : "ok",
    detail: (failed.length > 0 ? failed : standings)
      .map(({ domain, standing }) => `${domain} ${describeStanding(standing)}`)
      .join("; "),
  };
}

async function appliedMigrations(
  paths: ServerPaths,
  config: ServerConfig,
  stores: readonly DoctorStore[],
): Promise<Map<StoreDomain, AppliedMigration[] | undefined>> {
  const domains = stores.map((store) => store.domain);
  if (config.store.backend === "postgres") {
    const { postgresAppliedMigrations } = await import("../store/postgres.js");
    const found = await postgresAppliedMigrations(await readPostgresUrl(paths), domains);
    return new Map(domains.map((domain) => [domain, found.get(domain)]));
  }
  return new Map(
    domains.map((domain) => {
      const file = sqliteFileOf(paths, domain);
      return [domain, existsSync(file) ? readAppliedSqlite(file, domain) : undefined];
    }),
  );
}

function describeStanding(standing: SchemaStanding): string {
  switch (standing.state) {
    case "absent":
      return "no schema recorded yet";
    case "current":
      return `at version ${standing.version}`;
    case "behind":
      return `at version ${standing.version} of ${standing.latest} (migrated at the next start)`;
    case "newer":
      return `at version ${standing.version}, newer than this ivoai (${standing.latest}): upgrade ivoai`;
    case "edited":
      return `migration ${standing.edited} differs from the one applied: this ivoai's released migration was edited`;
  }
}

async function checkMode(rule: ModeRule): Promise<DoctorCheck> {
  try {
    const stat = await fs.lstat(rule.path);
    const mode = stat.mode & 0o777;
    const text = `mode ${mode.toString(8).padStart(4, "0")}`;
    if (stat.isSymbolicLink()) return { name: rule.name, status: "fail", detail: "is a symbolic link" };
    if (mode & rule.forbidden)
      return { name: rule.name, status: "fail", detail: `${text} is too permissive` };
    return { name: rule.name, status: "ok", detail: text };
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      return { name: rule.name, status: rule.required ? "fail" : "ok", detail: "absent" };
    }
    return { name: rule.name, status: "fail", detail: `cannot inspect (${errnoCode(error) ?? "error"})` };
  }
}

async function checkCertificate(file: string, now: Date): Promise<DoctorCheck> {
  try {
    const cert = new X509Certificate(await fs.readFile(file));
    const days = Math.floor((Date.parse(cert.validTo) - now.getTime()) / 86_400_000);
    const status = days < 0 ? "fail" : days < 14 ? "warn" : "ok";
    return {
      name: "tls_certificate",
      status,
      detail: `expires ${new Date(cert.validTo).toISOString()} (${days} days)`,
    };
  } catch {
    return { name: "tls_certificate", status: "fail", detail: "unreadable or not a certificate" };
  }
}
