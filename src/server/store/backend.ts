// Where the server's stores live: SQLite files under var/lib/ivoai (the embedded default), or one PostgreSQL
// database shared by every gateway replica, one schema per store. The choice is `[store] backend` in
// server.toml; PostgreSQL's connection string (it holds a password) is only ever in a 0600 secrets file.
import { promises as fs } from "node:fs";
import path from "node:path";
import { loadServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import type { ChangeSignal } from "./postgres.js";
import type { SqlDatabase } from "./sql.js";
import { openSqliteSql } from "./sqlite.js";

export type StoreDomain = "enrollment" | "oauth" | "audit" | "console" | "context" | "memory";
export type StoreBackendKind = "sqlite" | "postgres";

export interface StoreBackend {
  kind: StoreBackendKind;
  /** A connection (pool) for one domain's store; the caller closes it. */
  open(domain: StoreDomain): Promise<SqlDatabase>;
  /** PostgreSQL: a change signal from NOTIFYs on `channel` (the caller closes it). */
  listen?(channel: string): Promise<ChangeSignal>;
}

/** The file that holds PostgreSQL's connection string (0600). */
export function postgresUrlFile(paths: ServerPaths): string {
  return path.join(paths.secretsDir, "postgres.url");
}

/** Each domain's SQLite file. */
export function sqliteFileOf(paths: ServerPaths, domain: StoreDomain): string {
  switch (domain) {
    case "enrollment":
      return path.join(paths.enrollmentDir, "enrollment.sqlite");
    case "oauth":
      return paths.oauthDb;
    case "audit":
      return path.join(paths.auditDir, "audit.sqlite");
    case "console":
      return path.join(paths.enrollmentDir, "console.sqlite");
    case "context":
      return path.join(paths.contextDir, "catalogue.sqlite");
    case "memory":
      return path.join(paths.memoryDir, "memory.sqlite");
  }
}

/** PostgreSQL's connection string from its secrets file, refusing one that others can read. */
export async function readPostgresUrl(paths: ServerPaths): Promise<string> {
  const file = postgresUrlFile(paths);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, "r");
  } catch (error) {
    if (errnoCode(error) === "ENOENT")
      throw new IvoaiError(
        "CONFIG_MISSING",
        `the store is PostgreSQL but ${file} is missing: run 'ivoai server store set postgres --url-stdin'`,
      );
    throw error;
  }
  try {
    const stat = await handle.stat();
    if ((stat.mode & 0o077) !== 0)
      throw new IvoaiError("PERMISSION_DENIED", `${file} must be readable by its owner only (chmod 600)`);
    const url = (await handle.readFile("utf8")).trim();
    if (!/^postgres(ql)?:\/\//.test(url))
      throw new IvoaiError("CONFIG_INVALID", `${file} does not hold a postgres:// connection string`);
    return url;
  } finally {
    await handle.close();
  }
}

/** The backend server.toml names (SQLite when the tree has no `[store]` section). */
export async function resolveStoreBackend(paths: ServerPaths): Promise<StoreBackend> {
  const config = await loadServerConfig(paths.configFile);
  if (config.store.backend === "sqlite") {
    return { kind: "sqlite", open: async (domain) => openSqliteSql(sqliteFileOf(paths, domain)) };
  }
  const url = await readPostgresUrl(paths);
  const { listenForChanges, openPostgresSql } = await import("./postgres.js");
  return {
    kind: "postgres",
    open: (domain) => openPostgresSql({ url, schema: `ivoai_${domain}` }),
    listen: (channel) => listenForChanges(url, channel),
  };
}
