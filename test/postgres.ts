// PostgreSQL for tests: each call gives a throwaway database on the server named by IVOAI_TEST_PG_URL (default:
// the `ivoai_ci` role that .ci/run creates on the local cluster), dropped again by `drop()`.
// Where no PostgreSQL answers, `postgresAvailable()` is false: CI (CI=true) fails rather than skip.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { loadServerConfig, saveServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { postgresUrlFile } from "../src/server/store/backend.js";
import { writeFileAtomic } from "../src/shared/atomic-file.js";

export const TEST_PG_URL =
  process.env.IVOAI_TEST_PG_URL ?? "postgres://ivoai_ci:ivoai-ci-pw@127.0.0.1:5432/postgres";

let available: Promise<boolean> | undefined;

/** Whether the test PostgreSQL answers; throws under CI=true when it does not (tests must not skip there). */
export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("select 1");
      return true;
    } catch (error) {
      if (process.env.CI === "true")
        throw new Error(
          `CI needs PostgreSQL at IVOAI_TEST_PG_URL (.ci/run starts it): ${(error as Error).message}`,
        );
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return available;
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
