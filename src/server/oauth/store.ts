// OAuth state in SQLite: registered clients, activation codes, authorization requests and codes, grants (one per
// refresh family) and tokens. Secrets (activation codes, codes, tokens, CSRF values) are stored only as SHA-256 hashes.
import { mkdirSync } from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";
import { openSqlite } from "../../shared/native-sqlite.js";
import { sha256Hex } from "../../shared/tokens.js";

export interface OAuthClient {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  created_at: string;
}

/**
 * One consent's worth of access: the refresh family a code exchange starts. Rotation keeps the family, never
 * its absolute `expires_at`.
 */
export interface Grant {
  id: string;
  client_id: string;
  scopes: string[];
  resource: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

/** What an operator sees of a grant: metadata only, never a token or a hash. */
export interface GrantView extends Grant {
  /** When its refresh token was last rotated; null if never. */
  last_refreshed_at: string | null;
}

/** What an operator sees of a registered client, with its grants. */
export interface OAuthClientView extends OAuthClient {
  revoked_at: string | null;
  grants: GrantView[];
}

export interface PendingAuthorization {
  id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  state: string | null;
  csrf_sha256: string;
  expires_at: string;
  /** Wrong activation codes already typed for this request (it is re-issued after each). */
  failed_attempts?: number;
}

export interface AuthorizationCode {
  code_sha256: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  expires_at: string;
  used_at: string | null;
}

export interface TokenRecord {
  token_sha256: string;
  kind: "access" | "refresh";
  family: string;
  client_id: string;
  scopes: string[];
  resource: string;
  expires_at: string;
  revoked_at: string | null;
  used_at: string | null;
  code_sha256: string | null;
}

export interface OAuthStore {
  addClient(client: OAuthClient): void;
  /** A registered client that was not revoked. */
  getClient(id: string): OAuthClient | undefined;
  /** Every registered client, revoked ones included, with its grants (newest first). */
  listClients(): OAuthClientView[];
  /** Revokes a client, all its grants and every token issued to it; undefined for an unknown id. */
  revokeClient(id: string, now: string): OAuthClientView | undefined;
  addGrant(grant: Grant): void;
  getGrant(id: string): Grant | undefined;
  /** Revokes a grant and every token of its family; undefined for an unknown id. */
  revokeGrant(id: string, now: string): GrantView | undefined;
  addActivationCode(code: string, expiresAt: string, createdAt: string): string;
  /** Consumes a valid activation code atomically; false for unknown, used or expired ones. */
  consumeActivationCode(code: string, now: string): boolean;
  addPending(request: PendingAuthorization): void;
  takePending(id: string, now: string): PendingAuthorization | undefined;
  addCode(code: AuthorizationCode): void;
  /** The code as stored (used_at set when it was already spent). */
  peekCode(code: string): AuthorizationCode | undefined;
  /** Spends a code exactly once; false when it was already spent. */
  spendCode(code: string, now: string): boolean;
  /** Drops expired pending requests, and codes, tokens and grants that ended more than a day ago. */
  prune(now: string): void;
  addToken(token: TokenRecord): void;
  /** The token as it stands: revoked or expired with its grant or client too. */
  getToken(token: string): TokenRecord | undefined;
  /** Marks a refresh token used, exactly once; false when it already was. */
  useRefreshToken(token: string, now: string): boolean;
  /** Revokes a refresh family (its grant and all its tokens). */
  revokeFamily(family: string, now: string): void;
  revokeToken(token: string, now: string): void;
  revokeFromCode(codeSha256: string, now: string): void;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS clients (client_id TEXT PRIMARY KEY, client_name TEXT, redirect_uris TEXT NOT NULL, created_at TEXT NOT NULL);
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
`;

/** The absolute lifetime given to refresh families that predate grants (counted from the upgrade). */
export const LEGACY_GRANT_TTL_MS = 90 * 86_400_000;

export function openOAuthStore(file: string): OAuthStore {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = openSqlite(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  migrate(db);
  const toToken = (row: Record<string, unknown>): TokenRecord => ({
    ...(row as unknown as TokenRecord),
    scopes: JSON.parse(String(row.scopes)) as string[],
  });
  const toClient = (row: Record<string, unknown>): OAuthClient & { revoked_at: string | null } => ({
    client_id: String(row.client_id),
    client_name: (row.client_name as string | null) ?? null,
    redirect_uris: JSON.parse(String(row.redirect_uris)) as string[],
    created_at: String(row.created_at),
    revoked_at: (row.revoked_at as string | null) ?? null,
  });
  const grantColumns = `g.id, g.client_id, g.scopes, g.resource, g.created_at, g.expires_at, g.revoked_at,
    (SELECT MAX(t.used_at) FROM tokens t WHERE t.family = g.id AND t.kind = 'refresh') AS last_refreshed_at`;
  const toGrant = (row: Record<string, unknown>): GrantView => ({
    id: String(row.id),
    client_id: String(row.client_id),
    scopes: JSON.parse(String(row.scopes)) as string[],
    resource: String(row.resource),
    created_at: String(row.created_at),
    expires_at: String(row.expires_at),
    revoked_at: (row.revoked_at as string | null) ?? null,
    last_refreshed_at: (row.last_refreshed_at as string | null) ?? null,
  });
  const grantView = (id: string) => {
    const row = db.prepare(`SELECT ${grantColumns} FROM grants g WHERE g.id = ?`).get(id) as
      | Record<string, unknown>
      | undefined;
    return row ? toGrant(row) : undefined;
  };
  const clientView = (row: Record<string, unknown>): OAuthClientView => ({
    ...toClient(row),
    grants: (
      db
        .prepare(`SELECT ${grantColumns} FROM grants g WHERE g.client_id = ? ORDER BY g.created_at DESC`)
        .all(row.client_id) as Record<string, unknown>[]
    ).map(toGrant),
  });
  const revokeFamily = (family: string, now: string) => {
    db.prepare("UPDATE grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?").run(now, family);
    db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE family = ?").run(now, family);
  };
  return {
    addClient(client) {
      db.prepare(
        "INSERT INTO clients (client_id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)",
      ).run(client.client_id, client.client_name, JSON.stringify(client.redirect_uris), client.created_at);
    },
    getClient(id) {
      const row = db.prepare("SELECT * FROM clients WHERE client_id = ? AND revoked_at IS NULL").get(id) as
        | Record<string, unknown>
        | undefined;
      if (!row) return undefined;
      const { revoked_at: _revoked, ...client } = toClient(row);
      return client;
    },
    listClients() {
      const rows = db.prepare("SELECT * FROM clients ORDER BY created_at, client_id").all() as Record<
        string,
        unknown
      >[];
      return rows.map(clientView);
    },
    revokeClient(id, now) {
      const revoke = db.transaction(() => {
        const row = db.prepare("SELECT * FROM clients WHERE client_id = ?").get(id) as
          | Record<string, unknown>
          | undefined;
        if (!row) return undefined;
        db.prepare("UPDATE clients SET revoked_at = COALESCE(revoked_at, ?) WHERE client_id = ?").run(
          now,
          id,
        );
        db.prepare("UPDATE grants SET revoked_at = COALESCE(revoked_at, ?) WHERE client_id = ?").run(now, id);
        db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE client_id = ?").run(now, id);
        return clientView(
          db.prepare("SELECT * FROM clients WHERE client_id = ?").get(id) as Record<string, unknown>,
        );
      });
      return revoke();
    },
    addGrant(grant) {
      db.prepare(
        `INSERT INTO grants (id, client_id, scopes, resource, created_at, expires_at, revoked_at)
         VALUES (@id, @client_id, @scopes, @resource, @created_at, @expires_at, @revoked_at)`,
      ).run({ ...grant, scopes: JSON.stringify(grant.scopes) });
    },
    getGrant(id) {
      const view = grantView(id);
      if (!view) return undefined;
      const { last_refreshed_at: _last, ...grant } = view;
      return grant;
    },
    revokeGrant(id, now) {
      return db.transaction(() => {
        if (!grantView(id)) return undefined;
        revokeFamily(id, now);
        return grantView(id);
      })();
    },
    addActivationCode(code, expiresAt, createdAt) {
      const id = `act_${sha256Hex(code).slice(0, 12)}`;
      db.prepare(
        "INSERT INTO activation_codes (code_sha256, id, created_at, expires_at) VALUES (?, ?, ?, ?)",
      ).run(sha256Hex(code), id, createdAt, expiresAt);
      return id;
    },
    consumeActivationCode(code, now) {
      return (
        db
          .prepare(
            "UPDATE activation_codes SET used_at = ? WHERE code_sha256 = ? AND used_at IS NULL AND expires_at > ?",
          )
          .run(now, sha256Hex(code), now).changes === 1
      );
    },
    addPending(request) {
      db.prepare("INSERT INTO pending (id, body, expires_at) VALUES (?, ?, ?)").run(
        request.id,
        JSON.stringify(request),
        request.expires_at,
      );
      db.prepare("DELETE FROM pending WHERE expires_at < ?").run(
        new Date(Date.now() - 86_400_000).toISOString(),
      );
    },
    takePending(id, now) {
      const row = db.prepare("DELETE FROM pending WHERE id = ? RETURNING body, expires_at").get(id) as
        | { body: string; expires_at: string }
        | undefined;
      return row && row.expires_at > now ? (JSON.parse(row.body) as PendingAuthorization) : undefined;
    },
    addCode(code) {
      db.prepare("INSERT INTO codes (code_sha256, body) VALUES (?, ?)").run(
        code.code_sha256,
        JSON.stringify(code),
      );
    },
    peekCode(code) {
      const row = db.prepare("SELECT body, used_at FROM codes WHERE code_sha256 = ?").get(sha256Hex(code)) as
        | { body: string; used_at: string | null }
        | undefined;
      return row ? { ...(JSON.parse(row.body) as AuthorizationCode), used_at: row.used_at } : undefined;
    },
    spendCode(code, now) {
      return (
        db
          .prepare("UPDATE codes SET used_at = ? WHERE code_sha256 = ? AND used_at IS NULL")
          .run(now, sha256Hex(code)).changes === 1
      );
    },
    prune(now) {
      const dayAgo = new Date(Date.parse(now) - 86_400_000).toISOString();
      db.prepare("DELETE FROM pending WHERE expires_at < ?").run(now);
      db.prepare("DELETE FROM codes WHERE json_extract(body, '$.expires_at') < ?").run(dayAgo);
      db.prepare("DELETE FROM tokens WHERE expires_at < ?").run(dayAgo);
      db.prepare("DELETE FROM grants WHERE expires_at < ?").run(dayAgo);
      db.prepare("DELETE FROM activation_codes WHERE expires_at < ?").run(dayAgo);
      // Registration is open: a client that never completed an authorization within a day is forgotten
      // (it registers again if it comes back), so registrations cannot grow `server clients list` forever.
      db.prepare(
        `DELETE FROM clients WHERE created_at < ?
           AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.client_id = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.client_id = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM pending p WHERE json_extract(p.body, '$.client_id') = clients.client_id)
           AND NOT EXISTS (SELECT 1 FROM codes k WHERE json_extract(k.body, '$.client_id') = clients.client_id)`,
      ).run(dayAgo);
    },
    addToken(token) {
      db.prepare(
        `INSERT INTO tokens (token_sha256, kind, family, client_id, scopes, resource, expires_at, revoked_at, used_at, code_sha256)
         VALUES (@token_sha256, @kind, @family, @client_id, @scopes, @resource, @expires_at, @revoked_at, @used_at, @code_sha256)`,
      ).run({ ...token, scopes: JSON.stringify(token.scopes) });
    },
    getToken(token) {
      // A token ends with its grant and its client, even one issued while they were being revoked.
      const row = db
        .prepare(
          `SELECT t.token_sha256, t.kind, t.family, t.client_id, t.scopes, t.resource, t.used_at, t.code_sha256,
             CASE WHEN g.expires_at IS NOT NULL AND g.expires_at < t.expires_at THEN g.expires_at ELSE t.expires_at END
               AS expires_at,
             COALESCE(t.revoked_at, g.revoked_at, c.revoked_at) AS revoked_at
           FROM tokens t LEFT JOIN grants g ON g.id = t.family LEFT JOIN clients c ON c.client_id = t.client_id
           WHERE t.token_sha256 = ?`,
        )
        .get(sha256Hex(token)) as Record<string, unknown> | undefined;
      return row ? toToken(row) : undefined;
    },
    useRefreshToken(token, now) {
      return (
        db
          .prepare(
            "UPDATE tokens SET used_at = ? WHERE token_sha256 = ? AND kind = 'refresh' AND used_at IS NULL AND revoked_at IS NULL",
          )
          .run(now, sha256Hex(token)).changes === 1
      );
    },
    revokeFamily: (family, now) => db.transaction(revokeFamily)(family, now),
    revokeToken(token, now) {
      db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE token_sha256 = ?").run(
        now,
        sha256Hex(token),
      );
    },
    revokeFromCode(codeSha256, now) {
      db.prepare(
        "UPDATE grants SET revoked_at = COALESCE(revoked_at, ?) WHERE id IN (SELECT family FROM tokens WHERE code_sha256 = ?)",
      ).run(now, codeSha256);
      db.prepare(
        "UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE family IN (SELECT family FROM tokens WHERE code_sha256 = ?)",
      ).run(now, codeSha256);
    },
    close: () => db.close(),
  };
}

/**
 * Brings a store from before grants up to date: clients get `revoked_at`, and refresh families without a grant
 * get one whose absolute lifetime starts now.
 */
function migrate(db: Database.Database): void {
  // IMMEDIATE: the server and a CLI command may open the same file at once; one of them migrates.
  db.transaction(() => {
    const columns = db.prepare("PRAGMA table_info(clients)").all() as { name: string }[];
    if (!columns.some((column) => column.name === "revoked_at"))
      db.exec("ALTER TABLE clients ADD COLUMN revoked_at TEXT");
    const now = Date.now();
    db.prepare(
      `INSERT OR IGNORE INTO grants (id, client_id, scopes, resource, created_at, expires_at, revoked_at)
       SELECT family, MIN(client_id), MIN(scopes), MIN(resource), ?, ?, NULL FROM tokens
       WHERE family NOT IN (SELECT id FROM grants) GROUP BY family`,
    ).run(new Date(now).toISOString(), new Date(now + LEGACY_GRANT_TTL_MS).toISOString());
  }).immediate();
}
