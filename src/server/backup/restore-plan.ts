// What a restore would change besides adding rows: the server's settings (kept unless --apply-config) and the
// connectors (a connector the target lacks is added only with --apply-connectors), shown to the operator first.
import { existsSync } from "node:fs";
import { encodeServerConfig, type ServerConfig } from "../../config/server-config.js";
import { openSqlite } from "../../shared/native-sqlite.js";

/** One setting the backup's server.toml would change: dotted key, the target's value and the backup's. */
export interface ConfigChange {
  key: string;
  /** undefined when the target has no server.toml (or lacks the key). */
  target?: unknown;
  backup?: unknown;
}

interface ConnectorDefinition {
  type: string;
  path: string;
  allow_hardlinks: boolean;
}

/**
 * What restore does with one connector of the backup (by name) and its documents:
 * merge (the target has the same definition: documents added), add (new, with --apply-connectors: definition and
 * documents added), skip_new (new, not added), skip_differs (the target's connector of that name reads something
 * else: the target's is kept, the backup's documents are not added), skip_orphan (documents without a definition).
 */
export interface ConnectorPlan {
  name: string;
  action: "merge" | "add" | "skip_new" | "skip_differs" | "skip_orphan";
  backup: ConnectorDefinition | null;
  target: ConnectorDefinition | null;
  documents: number;
}

const flatten = (value: unknown, prefix: string, out: Map<string, unknown>): Map<string, unknown> => {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) flatten(inner, prefix ? `${prefix}.${key}` : key, out);
  } else if (prefix) out.set(prefix, value);
  return out;
};

/** Every setting that differs between the target's configuration (absent on a fresh host) and the backup's. */
export function configChanges(target: ServerConfig | undefined, backup: ServerConfig): ConfigChange[] {
  // As people type them: "7d -> 1d", not milliseconds.
  const mine = flatten(target ? encodeServerConfig(target) : {}, "", new Map());
  const theirs = flatten(encodeServerConfig(backup), "", new Map());
  const keys = [...new Set([...mine.keys(), ...theirs.keys()])].sort();
  return keys
    .filter((key) => JSON.stringify(mine.get(key)) !== JSON.stringify(theirs.get(key)))
    .map((key) => ({
      key,
      ...(mine.has(key) ? { target: mine.get(key) } : {}),
      ...(theirs.has(key) ? { backup: theirs.get(key) } : {}),
    }));
}

interface ConnectorRow extends ConnectorDefinition {
  name: string;
}

/**
 * The connectors of a catalogue file (schema untrusted), and its document count per connector name. A backup's
 * copy is opened read-only. So is the target when it has a -wal file; without one it is opened read-write, so that
 * closing the connection removes the -wal and -shm files opening a WAL store creates (read-only would leave them).
 */
function readConnectors(
  file: string,
  readonly: boolean,
): { rows: Map<string, ConnectorDefinition>; documents: Map<string, number> } {
  const db = openSqlite(file, { readonly, fileMustExist: true, timeout: 10_000 });
  try {
    db.pragma("trusted_schema = OFF");
    const hasHardlinks = (
      db.prepare("SELECT name FROM pragma_table_info('connectors')").all() as { name: string }[]
    ).some((column) => column.name === "allow_hardlinks");
    const rows = db
      .prepare(
        `SELECT name, type, path, ${hasHardlinks ? "allow_hardlinks" : "0"} AS allow_hardlinks FROM connectors`,
      )
      .all() as (Omit<ConnectorRow, "allow_hardlinks"> & { allow_hardlinks: number })[];
    const counts = db.prepare("SELECT connector, COUNT(*) AS n FROM documents GROUP BY connector").all() as {
      connector: string;
      n: number;
    }[];
    return {
      rows: new Map(
        rows.map((row) => [
          row.name,
          { type: row.type, path: row.path, allow_hardlinks: row.allow_hardlinks === 1 },
        ]),
      ),
      documents: new Map(counts.map((row) => [row.connector, row.n])),
    };
  } finally {
    db.close();
  }
}

const same = (a: ConnectorDefinition, b: ConnectorDefinition) =>
  a.type === b.type && a.path === b.path && a.allow_hardlinks === b.allow_hardlinks;

/** The plan for every connector the backup's catalogue names, against the target's catalogue (absent: none). */
export function planConnectors(
  backupFile: string,
  targetFile: string | undefined,
  applyConnectors: boolean,
): ConnectorPlan[] {
  const backup = readConnectors(backupFile, true);
  const target = targetFile
    ? readConnectors(targetFile, existsSync(`${targetFile}-wal`)).rows
    : new Map<string, ConnectorDefinition>();
  const names = [...new Set([...backup.rows.keys(), ...backup.documents.keys()])].sort();
  return names.map((name) => {
    const mine = target.get(name) ?? null;
    const theirs = backup.rows.get(name) ?? null;
    const action: ConnectorPlan["action"] = mine
      ? !theirs || same(mine, theirs)
        ? "merge"
        : "skip_differs"
      : !theirs
        ? "skip_orphan"
        : applyConnectors
          ? "add"
          : "skip_new";
    return { name, action, backup: theirs, target: mine, documents: backup.documents.get(name) ?? 0 };
  });
}
