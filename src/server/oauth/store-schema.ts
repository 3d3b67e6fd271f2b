// The OAuth store's schema on SQLite and PostgreSQL: versioned migrations, and the adoption of SQLite files written
// before migrations existed (including stores from before grants, whose refresh families get a grant).
import type { Migration } from "../store/migrations.js";
import type { SqlDatabase } from "../store/sql.js";

/** The absolute lifetime given to refresh families that predate grants (counted from the upgrade). */
export const LEGACY_GRANT_TTL_MS = 90 * 86_400_000;

const GRANTS = `CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY, client_id TEXT NOT NULL, scopes TEXT NOT NULL, resource TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT
)`;

/**
 * The OAuth store's schema versions: literals, frozen once released (schema_migrations records the SHA-256 of
 * each and a start refuses one that was edited); a change is a new version. Version 1 is the schema of the
 * unversioned store, so that an existing file is adopted as it stands.
 */
export const OAUTH_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "clients, activation codes, pending requests, codes, grants, tokens",
    up: `
CREATE TABLE IF NOT EXISTS clients (client_id TEXT PRIMARY KEY, client_name TEXT, redirect_uris TEXT NOT NULL, created_at TEXT NOT NULL, revoked_at TEXT);
CREATE TABLE IF NOT EXISTS activation_codes (code_sha256 TEXT PRIMARY KEY, id TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, used_at TEXT);
CREATE TABLE IF NOT EXISTS pending (id TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS codes (code_sha256 TEXT PRIMARY KEY, body TEXT NOT NULL, used_at TEXT);
CREATE TABLE IF NOT EXISTS tokens (
  token_sha256 TEXT PRIMARY KEY, kind TEXT NOT NULL, family TEXT NOT NULL, client_id TEXT NOT NULL, scopes TEXT NOT NULL,
  resource TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT, used_at TEXT, code_sha256 TEXT
);
CREATE INDEX IF NOT EXISTS tokens_family ON tokens (family);
CREATE TABLE IF NOT EXISTS grants (
  id TEXT PRIMARY KEY, client_id TEXT NOT NULL, scopes TEXT NOT NULL, resource TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS grants_client ON grants (client_id);
CREATE INDEX IF NOT EXISTS tokens_code ON tokens (code_sha256);
`,
  },
  {
    // Pending requests and codes keep their client and expiry in columns, so pruning needs no JSON function.
    version: 2,
    name: "client and expiry columns on codes and pending requests",
    up: {
      sqlite: `
ALTER TABLE codes ADD COLUMN client_id TEXT;
ALTER TABLE codes ADD COLUMN expires_at TEXT;
ALTER TABLE pending ADD COLUMN client_id TEXT;
UPDATE codes SET client_id = (body ->> 'client_id'), expires_at = (body ->> 'expires_at');
UPDATE pending SET client_id = (body ->> 'client_id');
CREATE INDEX IF NOT EXISTS codes_expires ON codes (expires_at);
CREATE INDEX IF NOT EXISTS pending_expires ON pending (expires_at);
CREATE INDEX IF NOT EXISTS tokens_client ON tokens (client_id);
`,
      postgres: `
ALTER TABLE codes ADD COLUMN client_id TEXT;
ALTER TABLE codes ADD COLUMN expires_at TEXT;
ALTER TABLE pending ADD COLUMN client_id TEXT;
UPDATE codes SET client_id = (body::json ->> 'client_id'), expires_at = (body::json ->> 'expires_at');
UPDATE pending SET client_id = (body::json ->> 'client_id');
CREATE INDEX IF NOT EXISTS codes_expires ON codes (expires_at);
CREATE INDEX IF NOT EXISTS pending_expires ON pending (expires_at);
CREATE INDEX IF NOT EXISTS tokens_client ON tokens (client_id);
`,
    },
  },
];

/**
 * Brings an unversioned SQLite file to the schema that version 1 describes: clients get `revoked_at`, and refresh
 * families without a grant get one whose absolute lifetime starts now. Does nothing on a versioned or new store.
 */
export async function adoptUnversionedSqlite(db: SqlDatabase, now = Date.now()): Promise<void> {
  if (db.dialect !== "sqlite") return;
  // IMMEDIATE: the server and a CLI command may open the same file at once; one of them adopts it.
  await db.transaction(async (tx) => {
    const tables = new Set(
      (await tx.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")).map(
        (row) => row.name,
      ),
    );
    if (!tables.has("clients")) return;
    if (tables.has("schema_migrations")) {
      const versioned = await tx.get("SELECT 1 AS one FROM schema_migrations WHERE store = 'oauth'");
      if (versioned) return;
    }
    const columns = await tx.all<{ name: string }>("SELECT name FROM pragma_table_info('clients')");
    if (!columns.some((column) => column.name === "revoked_at"))
      await tx.exec("ALTER TABLE clients ADD COLUMN revoked_at TEXT");
    if (!tables.has("tokens")) return;
    await tx.exec(GRANTS);
    await tx.run(
      `INSERT OR IGNORE INTO grants (id, client_id, scopes, resource, created_at, expires_at, revoked_at)
       SELECT family, MIN(client_id), MIN(scopes), MIN(resource), $1, $2, NULL FROM tokens
       WHERE family NOT IN (SELECT id FROM grants) GROUP BY family`,
      [new Date(now).toISOString(), new Date(now + LEGACY_GRANT_TTL_MS).toISOString()],
    );
  });
}
