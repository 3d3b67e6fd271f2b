// `ivoai server store show|set|migrate`: where the server's stores live (SQLite files, or one PostgreSQL shared by
// several gateway replicas). The connection string holds a password: it is read from standard input only, kept in
// etc/ivoai/secrets/postgres.url (0600), and never printed, logged or passed as an argument.
import { existsSync, promises as fs } from "node:fs";
import { loadServerConfig, saveServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { readPidFile } from "../../server/ops/pid-file.js";
import {
  postgresUrlFile,
  readPostgresUrl,
  type StoreBackendKind,
  type StoreDomain,
  sqliteFileOf,
} from "../../server/store/backend.js";
import { copyStore, type TableCopy } from "../../server/store/copy.js";
import type { SqlDatabase } from "../../server/store/sql.js";
import { openSqliteSql } from "../../server/store/sqlite.js";
import { SQL_STORES } from "../../server/stores.js";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { IvoaiError } from "../../shared/errors.js";
import { type CommandContext, defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { readStdin } from "../secret-input.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

interface StoreVersion {
  domain: StoreDomain;
  /** The schema version the store is at; null when it was never created. */
  version: number | null;
}

interface StoreShow {
  backend: StoreBackendKind;
  /** PostgreSQL: where it points (no password); SQLite: undefined. */
  target?: { host: string; port: number; database: string; user: string };
  reachable?: boolean;
  server_version?: string;
  error?: string;
  stores: (StoreVersion & { file?: string })[];
}

const where = (target: StoreShow["target"]) =>
  target ? `${target.user}@${target.host}:${target.port}/${target.database}` : "?";

async function schemaVersion(db: SqlDatabase, domain: StoreDomain): Promise<number | null> {
  try {
    const row = await db.get<{ version: number | null }>(
      "SELECT MAX(version) AS version FROM schema_migrations WHERE store = $1",
      [domain],
    );
    return row?.version ?? null;
  } catch {
    return null;
  }
}

async function showStore(paths: ServerPaths): Promise<StoreShow> {
  const config = await loadServerConfig(paths.configFile);
  const domains = SQL_STORES.map((store) => store.domain);
  if (config.store.backend === "sqlite") {
    const stores = [];
    for (const domain of domains) {
      const file = sqliteFileOf(paths, domain);
      let version: number | null = null;
      if (existsSync(file)) {
        const db = openSqliteSql(file);
        try {
          version = await schemaVersion(db, domain);
        } finally {
          await db.close();
        }
      }
      stores.push({ domain, version, file });
    }
    return { backend: "sqlite", stores };
  }
  const { checkPostgres, describePostgresUrl, postgresSchemaVersions } = await import(
    "../../server/store/postgres.js"
  );
  const url = await readPostgresUrl(paths);
  const show: StoreShow = { backend: "postgres", target: describePostgresUrl(url), stores: [] };
  try {
    show.server_version = (await checkPostgres(url)).server_version;
    show.reachable = true;
  } catch (error) {
    show.reachable = false;
    show.error = (error as Error).message;
    show.stores = domains.map((domain) => ({ domain, version: null }));
    return show;
  }
  const versions = await postgresSchemaVersions(url, domains);
  show.stores = domains.map((domain) => ({ domain, version: versions.get(domain) ?? null }));
  return show;
}

const showCommand = defineCommand({
  name: "show",
  summary: "Show where the server's stores live and their schema versions (never the password)",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const paths = await requireServerTree(ctx);
    const show = await showStore(paths);
    ctx.out.data(show, (view) =>
      [
        view.backend === "sqlite"
          ? "store: SQLite files (the embedded default)"
          : `store: PostgreSQL ${where(view.target)}` +
            (view.reachable ? ` (server ${view.server_version})` : ` — unreachable: ${view.error}`),
        formatTable(
          ["STORE", "SCHEMA", ...(view.backend === "sqlite" ? ["FILE"] : [])],
          view.stores.map((store) => [
            store.domain,
            store.version === null ? "-" : String(store.version),
            ...(view.backend === "sqlite" ? [store.file ?? ""] : []),
          ]),
        ),
      ].join("\n"),
    );
    return 0;
  },
});

async function restartNote(paths: ServerPaths): Promise<string | undefined> {
  const pid = await readPidFile(paths.pidFile);
  return pid.state === "running"
    ? `the running server (pid ${pid.record.pid}) uses its old store until it restarts`
    : undefined;
}

async function readUrl(ctx: CommandContext): Promise<string> {
  if (ctx.options["url-stdin"] !== true)
    throw new IvoaiError(
      "USAGE",
      "pass the connection string on standard input with --url-stdin (it holds a password: never as an argument)",
    );
  const url = await readStdin(8 * 1024, "a connection string");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IvoaiError(
      "USAGE",
      "standard input does not hold a URL like postgres://user:password@host:5432/db",
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    throw new IvoaiError("USAGE", "the connection string must start with postgres:// or postgresql://");
  if (!parsed.hostname && !parsed.searchParams.get("host"))
    throw new IvoaiError("USAGE", "the connection string names no host");
  return url;
}

const setCommand = defineCommand({
  name: "set",
  summary: "Choose where the stores live: sqlite (default) or postgres (URL on stdin)",
  description:
    "postgres: the connection string is read from standard input (--url-stdin), checked by connecting (unless\n" +
    "--no-check) and kept in etc/ivoai/secrets/postgres.url (0600), never in server.toml. Existing SQLite data\n" +
    "is not copied by this: run 'ivoai server store migrate --to postgres' for that. Takes effect at the next start.",
  json: true,
  positionals: [
    { name: "BACKEND", description: "sqlite or postgres", required: true, choices: ["sqlite", "postgres"] },
  ],
  options: {
    ...ROOT_OPTION,
    "url-stdin": {
      type: "boolean",
      description: "read the PostgreSQL connection string from standard input",
    },
    "no-check": { type: "boolean", description: "do not connect to check the connection string" },
  },
  async run(ctx) {
    const backend = ctx.positionals[0];
    if (backend !== "sqlite" && backend !== "postgres")
      throw new IvoaiError("USAGE", `unknown store backend "${backend}": use sqlite or postgres`);
    const paths = await requireServerTree(ctx);
    const config = await loadServerConfig(paths.configFile);
    const result: Record<string, unknown> = { backend };
    if (backend === "postgres") {
      const url = await readUrl(ctx);
      const { checkPostgres, describePostgresUrl } = await import("../../server/store/postgres.js");
      result.target = describePostgresUrl(url);
      if (ctx.options["no-check"] !== true) result.server_version = (await checkPostgres(url)).server_version;
      await fs.mkdir(paths.secretsDir, { recursive: true, mode: 0o700 });
      await writeFileAtomic(postgresUrlFile(paths), `${url}\n`, { mode: 0o600 });
    }
    await saveServerConfig(paths.configFile, { ...config, store: { ...config.store, backend } });
    // Back on SQLite, the connection string (a password) is not kept where nothing reads it.
    if (backend === "sqlite") await fs.rm(postgresUrlFile(paths), { force: true });
    const note = await restartNote(paths);
    if (note) result.note = note;
    ctx.out.data(result, (view) =>
      [
        backend === "postgres"
          ? `store: PostgreSQL ${where(view.target as StoreShow["target"])}${view.server_version ? ` (server ${view.server_version})` : " (not checked)"}`
          : "store: SQLite files",
        ...(note ? [`note: ${note}`] : []),
      ].join("\n"),
    );
    return 0;
  },
});

const migrateCommand = defineCommand({
  name: "migrate",
  summary: "Copy the SQLite stores into PostgreSQL, verifying counts and checksums (idempotent)",
  description:
    "Copies every SQL store of this server (see 'store show') from its SQLite file into PostgreSQL, whose URL\n" +
    "'store set postgres' saved. Run it with the server stopped. A table already copied is left alone; one that\n" +
    "was written to since is refused unless --force. The SQLite files are never changed.",
  json: true,
  options: {
    ...ROOT_OPTION,
    to: {
      type: "enum",
      value: "BACKEND",
      choices: ["postgres"],
      required: true,
      description: "where to copy to (postgres)",
    },
    force: { type: "boolean", description: "replace PostgreSQL tables that hold other rows" },
  },
  async run(ctx) {
    if (ctx.options.to !== "postgres") throw new IvoaiError("USAGE", "give --to postgres");
    const paths = await requireServerTree(ctx);
    const pid = await readPidFile(paths.pidFile);
    if (pid.state === "running")
      throw new IvoaiError(
        "CONFLICT",
        `the server is running (pid ${pid.record.pid}): stop it before migrating`,
      );
    const url = await readPostgresUrl(paths);
    const { openPostgresSql } = await import("../../server/store/postgres.js");
    const copied: { store: StoreDomain; tables: TableCopy[] }[] = [];
    for (const { domain, migrations, prepareSqlite } of SQL_STORES) {
      await prepareSqlite?.(paths);
      const file = sqliteFileOf(paths, domain);
      if (!existsSync(file)) continue;
      const source = openSqliteSql(file);
      const target = await openPostgresSql({ url, schema: `ivoai_${domain}` });
      try {
        const tables = await copyStore(domain, migrations, source, target, {
          force: ctx.options.force === true,
          onTable: (table, done, total) => {
            if (done === total || done % 10_000 === 0)
              ctx.out.note(`${domain}.${table}: ${done}/${total} rows`);
          },
        });
        copied.push({ store: domain, tables });
      } finally {
        await source.close();
        await target.close();
      }
    }
    ctx.out.data({ stores: copied }, (view) =>
      formatTable(
        ["STORE", "TABLE", "ROWS", "ACTION", "CHECKSUM"],
        view.stores.flatMap((store) =>
          store.tables.map((table) => [
            store.store,
            table.table,
            String(table.rows),
            table.action,
            table.checksum,
          ]),
        ),
      ),
    );
    return 0;
  },
});

export const serverStoreGroup: GroupSpec = {
  kind: "group",
  name: "store",
  summary: "Where the server's stores live: SQLite files or one PostgreSQL for several replicas",
  children: [showCommand, setCommand, migrateCommand],
};
