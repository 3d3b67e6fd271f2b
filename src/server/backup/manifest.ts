// The backup format (seed 000, "Backup e restauração"): a versioned manifest naming a fixed allow-list of entries.
// Where an entry lands on restore comes from its kind, never from a path the manifest supplies.
import path from "node:path";
import { z } from "zod";
import { IvoaiError } from "../../shared/errors.js";
import { CATALOGUE_SCHEMA } from "../context/catalogue.js";
import { MEMORY_META_SCHEMA } from "../memory/schema.js";

export const BACKUP_FORMAT = "ivoai-backup";
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST_FILE = "manifest.json";
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Prefix of a finished backup directory's name; unfinished ones start with a dot. */
export const BACKUP_NAME_PREFIX = "ivoai-backup-";

/**
 * Store schema versions this build reads and writes (the `meta.schema` row of each SQLite store), as each store
 * derives them from its own migrations. A backup whose store is newer is refused; an older one is migrated by
 * the store's own opener.
 */
export const SUPPORTED_SCHEMAS = { catalogue: CATALOGUE_SCHEMA, memory: MEMORY_META_SCHEMA } as const;
export type StoreKind = keyof typeof SUPPORTED_SCHEMAS;

/**
 * How each store a backup carries creates or migrates a SQLite file of its own, synchronously (the store's own
 * preparation: the same migrations as its open). Handed in by the composition root (src/server/stores.ts).
 */
export type BackupStores = Readonly<Record<StoreKind, (file: string) => void>>;

export type EntryKind = "config" | StoreKind | "index_metadata";

interface EntrySpec {
  kind: EntryKind;
  /** Largest size accepted for this entry on verify and restore. */
  maxBytes: number;
}

const GIB = 1024 ** 3;

/** Every file a backup may hold, by name: anything else is refused. */
export const ENTRY_SPECS: Readonly<Record<string, EntrySpec>> = {
  "server.toml": { kind: "config", maxBytes: 1024 * 1024 },
  "catalogue.sqlite": { kind: "catalogue", maxBytes: 64 * GIB },
  "memory.sqlite": { kind: "memory", maxBytes: 64 * GIB },
  "index-rebuild.json": { kind: "index_metadata", maxBytes: 1024 * 1024 },
};

/** What a backup leaves out on purpose (recorded in the manifest for the operator). */
export const EXCLUDED = [
  "etc/ivoai/secrets (TLS keys and every other secret)",
  "var/lib/ivoai/enrollment (enrollment codes and client credentials)",
  "var/lib/ivoai/oauth (OAuth clients, grants and tokens)",
  "var/lib/ivoai/audit (the audit log)",
  "var/lib/ivoai/context/vectors (rebuildable vector cache)",
];

const entrySchema = z.object({
  path: z.string().min(1).max(256),
  kind: z.enum(["config", "catalogue", "memory", "index_metadata"]),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits"),
  /** The store's schema version, for SQLite entries. */
  schema: z.number().int().positive().optional(),
});

export const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  format_version: z.literal(BACKUP_FORMAT_VERSION),
  ivoai_version: z.string().min(1).max(64),
  created_at: z.string().datetime({ offset: true }),
  stores: z.record(z.string().max(32), z.object({ schema: z.number().int().positive() })),
  entries: z.array(entrySchema).max(Object.keys(ENTRY_SPECS).length),
  excluded: z.array(z.string().max(200)).max(32).default([]),
});

export type BackupManifest = z.infer<typeof manifestSchema>;
export type ManifestEntry = z.infer<typeof entrySchema>;

/** Names that are, or live under, a secret or credential store: never in a backup, never restored. */
const SECRET_NAMES =
  /(^|\/)(secrets?|tls|enrollment|oauth|credentials?)(\/|$)|(^|\/)(oauth\.sqlite|secrets\.json|state\.json|key\.pem|cert\.pem)$|\.key$/i;

/** Parses and checks a manifest's text; the format version is checked first so an old or new one says so. */
export function parseManifest(text: string): BackupManifest {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalid("manifest.json is not valid JSON");
  }
  if (typeof raw !== "object" || raw === null) throw invalid("manifest.json is not an object");
  const record = raw as Record<string, unknown>;
  if (record.format !== BACKUP_FORMAT) throw invalid(`manifest.json is not an ${BACKUP_FORMAT} manifest`);
  if (record.format_version !== BACKUP_FORMAT_VERSION) {
    throw invalid(
      `backup format version ${JSON.stringify(record.format_version)} is not supported (this ivoai reads version ${BACKUP_FORMAT_VERSION})`,
    );
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(`manifest.json: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`);
  }
  const seen = new Set<string>();
  for (const entry of parsed.data.entries) {
    const spec = entrySpecOf(entry.path);
    if (spec.kind !== entry.kind) {
      throw invalid(`entry ${entry.path} is declared as ${entry.kind}, but that name holds ${spec.kind}`);
    }
    if (seen.has(entry.path)) throw invalid(`entry ${entry.path} is listed twice`);
    seen.add(entry.path);
    if (entry.size > spec.maxBytes) {
      throw invalid(`entry ${entry.path} is ${entry.size} bytes, over its bound of ${spec.maxBytes}`);
    }
  }
  for (const [store, supported] of Object.entries(SUPPORTED_SCHEMAS)) {
    const schema = parsed.data.stores[store]?.schema;
    if (schema !== undefined && schema > supported) {
      throw invalid(
        `the ${store} store in this backup has schema ${schema}, newer than this ivoai reads (${supported}): update ivoai first`,
      );
    }
  }
  return parsed.data;
}

/**
 * The spec of an entry name: a plain relative path (no absolute path, no `..`, no empty or `.` segment),
 * not a secret, and one of the allow-listed names.
 */
export function entrySpecOf(name: string): EntrySpec {
  if (name.includes("\0") || name.includes("\\")) throw invalid(`unsafe entry path ${JSON.stringify(name)}`);
  if (path.posix.isAbsolute(name)) throw invalid(`entry path ${JSON.stringify(name)} is absolute`);
  const segments = name.split("/");
  if (segments.some((segment) => segment === ".." || segment === "." || segment === "")) {
    throw invalid(`entry path ${JSON.stringify(name)} leaves the backup directory or is not normalised`);
  }
  if (SECRET_NAMES.test(name)) {
    throw invalid(
      `entry ${JSON.stringify(name)} names a secret or credential store: ivoai never restores secrets`,
    );
  }
  const spec = ENTRY_SPECS[name];
  if (!spec) throw invalid(`entry ${JSON.stringify(name)} is not part of the ivoai backup format`);
  return spec;
}

function invalid(message: string): IvoaiError {
  return new IvoaiError("STATE_CORRUPT", `invalid backup: ${message}`);
}
