// Ordered, reversible migrations of ivoai's own persisted client data (config.toml, secrets.json), run by
// `ivoai update`. Each step moves the data version by one and has an exact inverse; unknown TOML fields survive.
import { promises as fs } from "node:fs";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { writeFileAtomic } from "../shared/atomic-file.js";
import { errnoCode, IvoaiError } from "../shared/errors.js";
import { parseClientConfig, renderClientConfig } from "./client-config.js";
import {
  LEGACY_SERVER_ID,
  migrateSecretsDown,
  migrateSecretsUp,
  secretsV1Schema,
  secretsV2Schema,
} from "./secrets.js";

/** The data version this build of ivoai reads and writes. */
export const DATA_VERSION = 2;

export interface PersistedFiles {
  configFile: string;
  secretsFile: string;
}

export interface Migration {
  /** Version before `up` (after `down`); `up` leads to from + 1. */
  from: number;
  id: string;
  description: string;
  up(files: PersistedFiles): Promise<void>;
  down(files: PersistedFiles): Promise<void>;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

const writePrivate = (file: string, text: string) => writeFileAtomic(file, text, { mode: 0o600 });

/** The registry, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  {
    from: 1,
    id: "0002-servers-by-id",
    description: "secrets.json schema 1 → 2 and the legacy [server] table → [servers.srv_legacy_default]",
    async up(files) {
      const secrets = await readOptional(files.secretsFile);
      if (secrets !== undefined) {
        const v1 = secretsV1Schema.safeParse(JSON.parse(secrets));
        if (v1.success && !secretsV2Schema.safeParse(JSON.parse(secrets)).success)
          await writePrivate(files.secretsFile, `${JSON.stringify(migrateSecretsUp(v1.data), null, 2)}\n`);
      }
      const config = await readOptional(files.configFile);
      if (config !== undefined) {
        const doc = parseClientConfig(config, files.configFile);
        if (doc.migrated) await writePrivate(files.configFile, renderClientConfig(doc, doc.profiles));
      }
    },
    async down(files) {
      const secrets = await readOptional(files.secretsFile);
      if (secrets !== undefined) {
        const v2 = secretsV2Schema.safeParse(JSON.parse(secrets));
        if (v2.success) {
          if (!v2.data.servers[LEGACY_SERVER_ID] && !v2.data.server)
            throw new IvoaiError(
              "CONFLICT",
              "secrets.json has no default-profile credential to move back to schema 1",
            );
          await writePrivate(files.secretsFile, `${JSON.stringify(migrateSecretsDown(v2.data), null, 2)}\n`);
        }
      }
      const config = await readOptional(files.configFile);
      if (config !== undefined) {
        const raw = parseToml(config) as Record<string, unknown>;
        const servers = { ...((raw.servers as Record<string, unknown> | undefined) ?? {}) };
        if (raw.server !== undefined && servers[LEGACY_SERVER_ID] !== undefined) {
          delete servers[LEGACY_SERVER_ID];
          const { servers: _old, ...rest } = raw;
          const next = Object.keys(servers).length > 0 ? { ...rest, servers } : rest;
          await writePrivate(files.configFile, stringifyToml(next));
        }
      }
    },
  },
];

/** The version the files on disk are at (absent files count as current). */
export async function probeDataVersion(files: PersistedFiles): Promise<number> {
  const secrets = await readOptional(files.secretsFile);
  if (secrets !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(secrets);
    } catch {
      throw new IvoaiError(
        "CONFIG_INVALID",
        `${files.secretsFile} is not JSON: fix or remove it before updating`,
      );
    }
    const schema = (raw as { schema?: unknown }).schema;
    if (typeof schema === "number" && schema > DATA_VERSION)
      throw new IvoaiError(
        "CONFLICT",
        `${files.secretsFile} is schema ${schema}, newer than this ivoai understands`,
      );
    if (!secretsV2Schema.safeParse(raw).success) return 1;
  }
  const config = await readOptional(files.configFile);
  if (config !== undefined) {
    if (parseClientConfig(config, files.configFile).migrated) return 1;
  }
  return DATA_VERSION;
}

/** The steps from `from` to `to`, in order (empty when equal). */
export function migrationPath(from: number, to: number): Migration[] {
  if (from > to) throw new IvoaiError("CONFLICT", `persisted data is version ${from}, newer than ${to}`);
  const steps = MIGRATIONS.filter((step) => step.from >= from && step.from < to);
  if (steps.length !== to - from) throw new IvoaiError("INTERNAL", `no migration path from ${from} to ${to}`);
  return steps;
}
