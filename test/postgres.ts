// PostgreSQL for tests: each call gives a throwaway database on the server named by IVOAI_TEST_PG_URL (default:
// the `ivoai_ci` role that .ci/run creates on the local cluster), dropped again by `drop()`.
// The suite needs it: test/setup/postgres.ts stops with what to run when none answers.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadServerConfig, saveServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { postgresUrlFile } from "../src/server/store/backend.js";
import { writeFileAtomic } from "../src/shared/atomic-file.js";

export const TEST_PG_URL =
  process.env.IVOAI_TEST_PG_URL ?? "postgres://ivoai_ci:ivoai-ci-pw@127.0.0.1:5432/postgres";

/**
 * Whether the test PostgreSQL answers (the suite's global set-up requires it, so tests never skip; the replicas
 * benchmark asks before it starts).
 */
export async function postgresAvailable(): Promise<boolean> {
  return (await postgresProblem()) === undefined;
}

/**
 * What keeps the test PostgreSQL from serving the suite, if anything: it does not answer, or the role may not
 * drop a test database (`DROP DATABASE … WITH (FORCE)` also ends an autovacuum worker, which runs as no role, so
 * the role needs pg_signal_backend unless it is a superuser).
 */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
  client.on("error", () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ ok: boolean }>(
      "SELECT rolsuper OR pg_has_role(current_user, 'pg_signal_backend', 'USAGE') AS ok FROM pg_roles WHERE rolname = current_user",
    );
    return rows[0]?.ok ? undefined : "its role is not a member of pg_signal_backend";
  } catch {
    return "it does not answer";
  } finally {
    await client.end().catch(() => {});
  }
}

export interface ThrowawayDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A new empty database; `drop()` ends its connections and removes it. */
export async function createThrowawayDatabase(): Promise<ThrowawayDatabase> {
  const name = `ivoai_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const client = new pg.Client({ connectionString: TEST_PG_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Points an initialised server tree's stores at PostgreSQL, as `ivoai server store set postgres` does. */
export async function usePostgres(root: string, url: string): Promise<void> {
  const paths = serverPaths(root);
  const config = await loadServerConfig(paths.configFile);
  await saveServerConfig(paths.configFile, { ...config, store: { ...config.store, backend: "postgres" } });
  await writeFileAtomic(postgresUrlFile(paths), `${url}\n`, { mode: 0o600 });
}
