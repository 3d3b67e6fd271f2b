// OAuth state in SQLite: registered clients, activation codes, authorization requests and codes, and tokens.
// Secrets (activation codes, codes, tokens, CSRF values) are stored only as SHA-256 hashes.
import { mkdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { sha256Hex } from "../../shared/tokens.js";

export interface OAuthClient {
  client_id: string;
  client_name: string | null;
  redirect_uris: string[];
  created_at: string;
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
  getClient(id: string): OAuthClient | undefined;
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
  /** Drops expired pending requests, and codes and tokens that ended more than a day ago. */
  prune(now: string): void;
  addToken(token: TokenRecord): void;
  getToken(token: string): TokenRecord | undefined;
  /** Marks a refresh token used, exactly once; false when it already was. */
  useRefreshToken(token: string, now: string): boolean;
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
CREATE INDEX IF NOT EXISTS tokens_code ON tokens (code_sha256);
`;

export function openOAuthStore(file: string): OAuthStore {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  const toToken = (row: Record<string, unknown>): TokenRecord => ({
    ...(row as unknown as TokenRecord),
    scopes: JSON.parse(String(row.scopes)) as string[],
  });
  return {
    addClient(client) {
      db.prepare(
        "INSERT INTO clients (client_id, client_name, redirect_uris, created_at) VALUES (?, ?, ?, ?)",
      ).run(client.client_id, client.client_name, JSON.stringify(client.redirect_uris), client.created_at);
    },
    getClient(id) {
      const row = db.prepare("SELECT * FROM clients WHERE client_id = ?").get(id) as
        | Record<string, unknown>
        | undefined;
      return row
        ? {
            ...(row as unknown as OAuthClient),
            redirect_uris: JSON.parse(String(row.redirect_uris)) as string[],
          }
        : undefined;
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
      db.prepare("DELETE FROM activation_codes WHERE expires_at < ?").run(dayAgo);
    },
    addToken(token) {
      db.prepare(
        `INSERT INTO tokens (token_sha256, kind, family, client_id, scopes, resource, expires_at, revoked_at, used_at, code_sha256)
         VALUES (@token_sha256, @kind, @family, @client_id, @scopes, @resource, @expires_at, @revoked_at, @used_at, @code_sha256)`,
      ).run({ ...token, scopes: JSON.stringify(token.scopes) });
    },
    getToken(token) {
      const row = db.prepare("SELECT * FROM tokens WHERE token_sha256 = ?").get(sha256Hex(token)) as
        | Record<string, unknown>
        | undefined;
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
    revokeFamily(family, now) {
      db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE family = ?").run(now, family);
    },
    revokeToken(token, now) {
      db.prepare("UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE token_sha256 = ?").run(
        now,
        sha256Hex(token),
      );
    },
    revokeFromCode(codeSha256, now) {
      db.prepare(
        "UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE family IN (SELECT family FROM tokens WHERE code_sha256 = ?)",
      ).run(now, codeSha256);
    },
    close: () => db.close(),
  };
}
