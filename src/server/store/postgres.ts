// The SQL interface over PostgreSQL (node-postgres, pooled). Each domain store lives in its own schema
// (`ivoai_<domain>`), reached through the connection's search_path, so one statement text serves both backends.
import type { ClientConfig, Pool, PoolClient, QueryResult } from "pg";
import { IvoaiError } from "../../shared/errors.js";
import { redactText } from "../../shared/redact.js";
import type { AppliedMigration } from "./migrations.js";
import { refuseNul, type SqlDatabase, type SqlExecutor, type SqlRunResult } from "./sql.js";

export interface PostgresSqlOptions {
  /** The connection string (it holds a password: never log it). */
  url: string;
  /** The schema this store's tables live in; created when missing. */
  schema: string;
  /** Pooled connections (default 4). */
  max?: number;
  /** Attempts for a transaction that hits a serialisation failure or deadlock (default 5). */
  attempts?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** serialization_failure, deadlock_detected: the transaction may simply be run again. */
const RETRYABLE = new Set(["40001", "40P01"]);

type Queryable = Pick<Pool, "query"> | PoolClient;

function executor(client: Queryable): SqlExecutor {
  const query = async (sql: string, params: readonly unknown[] = []): Promise<QueryResult> => {
    refuseNul(params);
    try {
      return await client.query(sql, params as unknown[]);
    } catch (error) {
      throw postgresError(error);
    }
  };
  return {
    dialect: "postgres",
    async all<T>(sql: string, params?: readonly unknown[]) {
      return (await query(sql, params)).rows as T[];
    },
    async get<T>(sql: string, params?: readonly unknown[]) {
      return (await query(sql, params)).rows[0] as T | undefined;
    },
    async run(sql: string, params?: readonly unknown[]): Promise<SqlRunResult> {
      return { changes: (await query(sql, params)).rowCount ?? 0 };
    },
    async exec(script: string) {
      await query(script);
    },
  };
}

/** Loads node-postgres only when a PostgreSQL store is opened (the SQLite path never pays for it). */
async function loadPg(): Promise<typeof import("pg")> {
  const module = (await import("pg")) as typeof import("pg") & { default?: typeof import("pg") };
  const pg = module.default ?? module;
  // COUNT(*) and BIGINT come back as numbers: every count and id ivoai keeps is far below 2^53.
  pg.types.setTypeParser(20, (value) => Number(value));
  return pg;
}

/** How long a new connection may take to open, and how long a request may wait for a pooled one. */
const CONNECT_TIMEOUT_MS = 5000;
const POOL_WAIT_MS = 30_000;

export async function openPostgresSql(options: PostgresSqlOptions): Promise<SqlDatabase> {
  if (!SCHEMA_NAME.test(options.schema)) throw new Error(`invalid schema name: ${options.schema}`);
  const pg = await loadPg();
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 4,
    options: `-c search_path=${options.schema}`,
    application_name: "ivoai",
    // A request waits its turn for a pooled connection up to 30 s (a burst of writes queues on one row and can
    // keep the pool busy for seconds), but a host that does not answer fails a new connection after 5 s.
    connectionTimeoutMillis: POOL_WAIT_MS,
    Client: class extends pg.Client {
      constructor(config?: ClientConfig) {
        super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
      }
    },
  });
  // An idle client that loses its connection must not end the process.
  pool.on("error", () => {});
  try {
    // Under a lock: two replicas creating one schema at once would otherwise collide in the catalogue.
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`ivoai-schema:${options.schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
      await client.query("COMMIT");
    } finally {
      client.release(true);
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw postgresError(error);
  }
  const attempts = options.attempts ?? 5;
  const direct = executor(pool);
  return {
    ...direct,
    async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        let client: PoolClient;
        try {
          client = await pool.connect();
        } catch (error) {
          throw postgresError(error);
        }
        let broken = false;
        const tx = executor(client);
        try {
          await tx.exec("BEGIN");
          const result = await work(tx);
          await tx.exec("COMMIT");
          return result;
        } catch (error) {
          try {
            await client.query("ROLLBACK");
          } catch {
            broken = true;
          }
          // Database errors arrive as IvoaiErrors from the executor; anything else is `work`'s own, as thrown.
          const code = (error as { data?: { sqlstate?: string } }).data?.sqlstate;
          if (!(code && RETRYABLE.has(code) && attempt < attempts)) throw error;
        } finally {
          client.release(broken);
        }
      }
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * A PostgreSQL failure as an IvoaiError whose message names the cause but never the connection string; the
 * SQLSTATE is kept (data.sqlstate) so that stores can tell a unique violation from an outage.
 */
export function postgresError(error: unknown): Error {
  if (error instanceof IvoaiError) return error;
  const raw = error as { code?: string; message?: string };
  const message = redactText(String(raw?.message ?? error)).replace(
    /postgres(ql)?:\/\/\S+/gi,
    "postgres://…",
  );
  const sqlstate = typeof raw?.code === "string" && /^[0-9A-Z]{5}$/.test(raw.code) ? raw.code : undefined;
  if (!sqlstate) {
    // No cause kept: a connection error (e.g. a URL that does not parse) can carry the whole URL in its fields.
    return new IvoaiError("STORE_UNAVAILABLE", `PostgreSQL is not reachable: ${message}`, {
      ...(raw?.code ? { data: { code: raw.code } } : {}),
    });
  }
  // Text PostgreSQL cannot store (NUL, invalid encoding) is the caller's input, not an outage.
  if (sqlstate === "22021" || sqlstate === "22P05")
    return new IvoaiError("USAGE", "text may not contain NUL (U+0000) characters", { data: { sqlstate } });
  return new IvoaiError("STORE", `PostgreSQL: ${message}`, { cause: error, data: { sqlstate } });
}

/** A client, or an IvoaiError without the URL when the string does not even parse. */
function newClient(
  pg: typeof import("pg"),
  url: string,
  timeoutMs: number,
  keepAlive = false,
): InstanceType<typeof pg.Client> {
  try {
    return new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, keepAlive });
  } catch {
    throw new IvoaiError("CONFIG_INVALID", "the PostgreSQL connection string does not parse");
  }
}

/** Where a connection string points, without its password (for `store show` and messages). */
export function describePostgresUrl(url: string): {
  host: string;
  port: number;
  database: string;
  user: string;
} {
  const parsed = new URL(url);
  return {
    host: decodeURIComponent(parsed.hostname) || "localhost",
    port: Number(parsed.port || 5432),
    database: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username),
    user: decodeURIComponent(parsed.username),
  };
}

/** Connects once and asks the server's version: an IvoaiError that never holds the URL when it cannot. */
export async function checkPostgres(
  url: string,
  timeoutMs = CONNECT_TIMEOUT_MS,
): Promise<{ server_version: string }> {
  const pg = await loadPg();
  const client = newClient(pg, url, timeoutMs);
  client.on("error", () => {});
  try {
    await client.connect();
    const row = (await client.query("SHOW server_version")).rows[0] as { server_version: string };
    return { server_version: row.server_version };
  } catch (error) {
    throw postgresError(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The schema version of each store (null when never created), read without creating anything. */
export async function postgresSchemaVersions(
  url: string,
  stores: readonly string[],
): Promise<Map<string, number | null>> {
  const applied = await postgresAppliedMigrations(url, stores);
  return new Map(
    stores.map((store) => {
      const rows = applied.get(store);
      return [store, rows && rows.length > 0 ? Math.max(...rows.map((row) => Number(row.version))) : null];
    }),
  );
}

/** Each store's applied migrations (undefined when never versioned), read without creating anything. */
export async function postgresAppliedMigrations(
  url: string,
  stores: readonly string[],
): Promise<Map<string, AppliedMigration[] | undefined>> {
  const pg = await loadPg();
  const client = newClient(pg, url, CONNECT_TIMEOUT_MS);
  client.on("error", () => {});
  const applied = new Map<string, AppliedMigration[] | undefined>();
  try {
    await client.connect();
    for (const store of stores) {
      if (!SCHEMA_NAME.test(`ivoai_${store}`)) throw new Error(`invalid store name: ${store}`);
      const columns = await client.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'schema_migrations'",
        [`ivoai_${store}`],
      );
      if (columns.rows.length === 0) {
        applied.set(store, undefined);
        continue;
      }
      const checksum = columns.rows.some((row) => row.column_name === "checksum")
        ? "checksum"
        : "NULL AS checksum";
      const rows = await client.query(
        `SELECT version, ${checksum} FROM ivoai_${store}.schema_migrations WHERE store = $1 ORDER BY version`,
        [store],
      );
      applied.set(store, rows.rows as AppliedMigration[]);
    }
    return applied;
  } catch (error) {
    throw postgresError(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Whether a store may have changed, from PostgreSQL notifications (LISTEN): a replica's index then asks the store
 * for its generation only after a NOTIFY, instead of on every search. While the listening connection is down,
 * every check says "changed" (the index falls back to asking each time), and a reconnect counts as a change,
 * so notifications missed meanwhile cost nothing but one catch-up.
 */
export interface ChangeSignal {
  /** True when a change may have happened since the last call (always while not listening); resets. */
  takeChanged(): boolean;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Called on each notification and after each (re)connection (tests wait on it). */
  onSignal?: (reason: "notification" | "connected" | "disconnected") => void;
  /**
   * Say "changed" at least this often even without a notification (default 500 ms): a notification can arrive
   * after a search that follows the write at once, or be lost on a connection that looks alive.
   */
  maxQuietMs?: number;
  /** Delay before the first reconnection attempt, doubled up to 5 s (default 100 ms). */
  retryMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export async function listenForChanges(
  url: string,
  channel: string,
  options: ListenOptions = {},
): Promise<ChangeSignal> {
  if (!CHANNEL.test(channel)) throw new Error(`invalid channel name: ${channel}`);
  const pg = await loadPg();
  let dirty = true;
  let listening = false;
  let lastChecked = 0;
  const maxQuietMs = options.maxQuietMs ?? 500;
  let closed = false;
  let client: InstanceType<typeof pg.Client> | undefined;
  let retry = options.retryMs ?? 100;
  let timer: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const next = newClient(pg, url, CONNECT_TIMEOUT_MS, true);
    const lost = () => {
      if (client !== next) return;
      listening = false;
      client = undefined;
      options.onSignal?.("disconnected");
      next.end().catch(() => {});
      schedule();
    };
    next.on("error", lost);
    next.on("end", lost);
    next.on("notification", () => {
      dirty = true;
      options.onSignal?.("notification");
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      lost();
      throw postgresError(error);
    }
    if (closed || client !== next) return;
    listening = true;
    dirty = true;
    retry = options.retryMs ?? 100;
    options.onSignal?.("connected");
  };
  const schedule = () => {
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      connect().catch(() => {});
    }, retry);
    timer.unref();
    retry = Math.min(retry * 2, 5000);
  };
  try {
    await connect();
  } catch (error) {
    closed = true;
    if (timer) clearTimeout(timer);
    throw error;
  }
  return {
    takeChanged() {
      const now = Date.now();
      if (!listening || dirty || now - lastChecked >= maxQuietMs) {
        dirty = false;
        lastChecked = now;
        return true;
      }
      return false;
    },
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    },
  };
}
