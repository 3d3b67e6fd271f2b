// `ivoai server backup verify|list`, and the checks restore runs before it writes anything: manifest schema,
// safe names, regular files only, bounded sizes, every SHA-256, SQLite integrity, and who signed it.
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { IvoaiError } from "../../shared/errors.js";
import {
  BACKUP_NAME_PREFIX,
  type BackupManifest,
  type BackupStores,
  entrySpecOf,
  MANIFEST_FILE,
  MAX_MANIFEST_BYTES,
  type ManifestEntry,
  parseManifest,
} from "./manifest.js";
import { directoryOrAbsent, hashFile, regularFileOrAbsent } from "./safe-files.js";
import { checkSignature, type SignatureCheck } from "./signature.js";
import { integrityProblems } from "./sqlite-files.js";
import { schemaProblems } from "./store-schema.js";

export interface VerifiedEntry extends ManifestEntry {
  file: string;
  /** The bytes of a small entry (config, metadata), kept so that restore writes exactly what was hashed. */
  content?: Buffer;
}

export interface VerifiedBackup {
  path: string;
  manifest: BackupManifest;
  entries: VerifiedEntry[];
  /** Who made it, as far as the key of the server passed in `paths` can tell. */
  signature: SignatureCheck;
}

/** Reads the manifest of a backup directory (a real directory, a regular manifest of bounded size). */
export async function readManifest(dir: string): Promise<BackupManifest> {
  return (await readManifestBytes(dir)).manifest;
}

/** The manifest and the exact bytes it was parsed from (what a signature covers). */
async function readManifestBytes(dir: string): Promise<{ manifest: BackupManifest; bytes: Buffer }> {
  if (!(await directoryOrAbsent(dir))) throw new IvoaiError("NOT_FOUND", `no backup at ${dir}`);
  const file = path.join(dir, MANIFEST_FILE);
  const stat = await regularFileOrAbsent(file);
  if (!stat) throw new IvoaiError("STATE_CORRUPT", `invalid backup: ${dir} has no ${MANIFEST_FILE}`);
  const { content } = await hashFile(file, MAX_MANIFEST_BYTES, { expected: stat, keep: true });
  const bytes = content ?? Buffer.alloc(0);
  return { manifest: parseManifest(bytes.toString("utf8")), bytes };
}

/**
 * Checks a whole backup without writing anywhere: the manifest, then every entry's name, type, size bound,
 * size and SHA-256, then (with `integrity`) `PRAGMA integrity_check` of each store and its schema against the
 * tables and indexes this build creates, then its signature against the key of the server at `paths`.
 * Throws at the first problem, including a signature that names that key and does not match.
 */
export async function verifyBackup(
  dir: string,
  options: { paths: ServerPaths } & ({ integrity?: false } | { integrity: true; stores: BackupStores }),
): Promise<VerifiedBackup> {
  const { manifest, bytes } = await readManifestBytes(dir);
  const entries: VerifiedEntry[] = [];
  for (const entry of manifest.entries) {
    const spec = entrySpecOf(entry.path);
    const file = path.join(dir, entry.path);
    const stat = await regularFileOrAbsent(file);
    if (!stat) throw corrupt(`entry ${entry.path} is missing`);
    if (stat.size !== entry.size) {
      throw corrupt(`entry ${entry.path} is ${stat.size} bytes, the manifest says ${entry.size}`);
    }
    const small = spec.maxBytes <= MAX_MANIFEST_BYTES;
    const read = await hashFile(file, Math.min(spec.maxBytes, entry.size), { expected: stat, keep: small });
    if (read.sha256 !== entry.sha256) throw corrupt(`entry ${entry.path} does not match its SHA-256`);
    entries.push({ ...entry, file, ...(read.content ? { content: read.content } : {}) });
  }
  if (options.integrity) {
    for (const entry of entries) {
      if (entry.kind !== "catalogue" && entry.kind !== "memory") continue;
      const problems = integrityProblems(entry.file);
      if (problems.length > 0)
        throw corrupt(`entry ${entry.path} fails integrity_check: ${problems.join("; ")}`);
      // A store that carries triggers, views or tables of its own is never restored, not even partly.
      const foreign = schemaProblems(entry.kind, entry.file, options.stores);
      if (foreign.length > 0)
        throw corrupt(`entry ${entry.path} holds schema ivoai does not create: ${foreign.join("; ")}`);
    }
  }
  return { path: dir, manifest, entries, signature: await checkSignature(dir, bytes, options.paths) };
}

export interface BackupListing {
  name: string;
  path: string;
  valid: boolean;
  created_at: string | null;
  ivoai_version: string | null;
  format_version: number | null;
  stores: Record<string, number>;
  entries: number;
  total_bytes: number;
  /** Why the manifest could not be read, when it could not. */
  problem?: string;
}

/** The backups under `dir`, newest first; only manifests are read (run `verify` for hashes). */
export async function listBackups(dir: string): Promise<BackupListing[]> {
  if (!(await directoryOrAbsent(dir))) return [];
  const names = (await fs.readdir(dir)).filter((name) => name.startsWith(BACKUP_NAME_PREFIX)).sort();
  const rows: BackupListing[] = [];
  for (const name of names.reverse()) {
    const full = path.join(dir, name);
    try {
      const manifest = await readManifest(full);
      rows.push({
        name,
        path: full,
        valid: true,
        created_at: manifest.created_at,
        ivoai_version: manifest.ivoai_version,
        format_version: manifest.format_version,
        stores: Object.fromEntries(
          Object.entries(manifest.stores).map(([store, facts]) => [store, facts.schema]),
        ),
        entries: manifest.entries.length,
        total_bytes: manifest.entries.reduce((sum, entry) => sum + entry.size, 0),
      });
    } catch (error) {
      rows.push({
        name,
        path: full,
        valid: false,
        created_at: null,
        ivoai_version: null,
        format_version: null,
        stores: {},
        entries: 0,
        total_bytes: 0,
        problem: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return rows;
}

function corrupt(message: string): IvoaiError {
  return new IvoaiError("STATE_CORRUPT", `invalid backup: ${message}`);
}
