// Web console sign-in state in SQLite: single-use sign-in codes and browser sessions. Codes and session tokens
// are stored only as SHA-256 hashes; a session's CSRF token is derived from its token, so nothing else is kept.
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { CONSOLE_CODE_PREFIX, type ConsoleRole } from "../../protocol/console-api.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";

/** Prefix of a console session token (the cookie's value). */
export const CONSOLE_SESSION_PREFIX = "ivoai_cs_";

/** What an operator sees of a sign-in code: never the code or its hash. */
export interface ConsoleCodeView {
  id: string;
  role: ConsoleRole;
  name: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A console session as stored, without its token hash. */
export interface ConsoleSessionRecord {
  id: string;
  role: ConsoleRole;
  name: string;
  created_at: string;
  /** The absolute end: no activity extends it. */
  expires_at: string;
  /** The idle end is `last_seen_at` + the idle timeout. */
  last_seen_at: string;
  revoked_at: string | null;
}

export interface ConsoleStore {
  /** A new single-use code (returned once; only its hash is kept). */
  createCode(input: { role: ConsoleRole; name: string; ttlMs: number; now: Date }): {
    code: string;
    view: ConsoleCodeView;
  };
  /**
   * Spends a valid code exactly once and opens a session ending `absoluteMs` from now; undefined for an unknown,
   * used or expired code (the reason is not told apart).
   */
  exchangeCode(
    code: string,
    now: Date,
    absoluteMs: number,
  ): { session: ConsoleSessionRecord; token: string } | undefined;
  /** The session a token belongs to, whatever its state (the caller checks revocation and expiry). */
  findSession(token: string): ConsoleSessionRecord | undefined;
  /** Records activity (moves the idle end). */
  touch(id: string, at: Date): void;
  /** Revokes one session; undefined for an unknown id. */
  revoke(id: string, at: Date): ConsoleSessionRecord | undefined;
  /** Revokes every session not yet revoked; returns how many. */
  revokeAll(at: Date): number;
  /** Every session still stored, newest first. */
  listSessions(): ConsoleSessionRecord[];
  /** Drops codes that ended, and sessions that ended (revoked, idle or absolute) more than a day ago. */
  prune(now: Date, idleMs: number): void;
  close(): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS codes (
  code_sha256 TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, used_at TEXT
);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, revoked_at TEXT
);
`;

const SESSION_COLUMNS = "id, role, name, created_at, expires_at, last_seen_at, revoked_at";
const DAY_MS = 86_400_000;

/** The console store's file, beside the enrollment state (both are who may use the server). */
export function consoleDbPath(paths: ServerPaths): string {
  return path.join(paths.enrollmentDir, "console.sqlite");
}

/** Opens (or creates) the console store; the file is the server user's alone (0600 in a 0700 folder). */
export function openConsoleStore(file: string): ConsoleStore {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Created 0600 before SQLite opens it: its -wal and -shm files take the database file's mode.
  closeSync(openSync(file, "a", 0o600));
  chmodSync(file, 0o600);
  const db = openSqlite(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(SCHEMA);
  const sessionByHash = db.prepare(
    `SELECT ${SESSION_COLUMNS}, token_sha256 FROM sessions WHERE token_sha256 = ?`,
  );
  const sessionById = db.prepare(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`);

  return {
    createCode({ role, name, ttlMs, now }) {
      const code = newSecret(CONSOLE_CODE_PREFIX);
      const view: ConsoleCodeView = {
        id: newId("ccode_"),
        role,
        name,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + ttlMs).toISOString(),
        used_at: null,
      };
      db.prepare(
        `INSERT INTO codes (code_sha256, id, role, name, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(sha256Hex(code), view.id, role, name, view.created_at, view.expires_at);
      return { code, view };
    },
    exchangeCode(code, now, absoluteMs) {
      const at = now.toISOString();
      return db.transaction(() => {
        // Spent in the same statement that checks it: two racing exchanges cannot both win.
        const spent = db
          .prepare(
            `UPDATE codes SET used_at = ? WHERE code_sha256 = ? AND used_at IS NULL AND expires_at > ?
             RETURNING role, name`,
          )
          .get(at, sha256Hex(code), at) as { role: ConsoleRole; name: string } | undefined;
        if (!spent) return undefined;
        const token = newSecret(CONSOLE_SESSION_PREFIX);
        const session: ConsoleSessionRecord = {
          id: newId("cs_"),
          role: spent.role,
          name: spent.name,
          created_at: at,
          expires_at: new Date(now.getTime() + absoluteMs).toISOString(),
          last_seen_at: at,
          revoked_at: null,
        };
        db.prepare(
          `INSERT INTO sessions (id, token_sha256, role, name, created_at, expires_at, last_seen_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(session.id, sha256Hex(token), session.role, session.name, at, session.expires_at, at);
        return { session, token };
      })();
    },
    findSession(token) {
      const wanted = sha256Hex(token);
      // Looked up by the token's SHA-256: the lookup's timing can tell nothing about the token itself.
      const row = sessionByHash.get(wanted) as (ConsoleSessionRecord & { token_sha256: string }) | undefined;
      if (!row) return undefined;
      const { token_sha256: _hash, ...session } = row;
      return session;
    },
    touch(id, at) {
      db.prepare("UPDATE sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?").run(
        at.toISOString(),
        id,
        at.toISOString(),
      );
    },
    revoke(id, at) {
      db.prepare("UPDATE sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?").run(
        at.toISOString(),
        id,
      );
      return sessionById.get(id) as ConsoleSessionRecord | undefined;
    },
    revokeAll(at) {
      return db.prepare("UPDATE sessions SET revoked_at = ? WHERE revoked_at IS NULL").run(at.toISOString())
        .changes;
    },
    listSessions() {
      return db
        .prepare(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created_at DESC, id`)
        .all() as ConsoleSessionRecord[];
    },
    prune(now, idleMs) {
      const at = now.toISOString();
      const dayAgo = new Date(now.getTime() - DAY_MS).toISOString();
      db.prepare("DELETE FROM codes WHERE expires_at <= ? OR used_at IS NOT NULL").run(at);
      db.prepare("DELETE FROM sessions WHERE expires_at < ? OR revoked_at < ? OR last_seen_at < ?").run(
        dayAgo,
        dayAgo,
        new Date(now.getTime() - DAY_MS - idleMs).toISOString(),
      );
    },
    close: () => db.close(),
  };
}

/** Where a session stands at `now`, given the idle timeout. */
export type ConsoleSessionState = "active" | "revoked" | "expired" | "idle";

export function consoleSessionState(
  session: ConsoleSessionRecord,
  now: Date,
  idleMs: number,
): ConsoleSessionState {
  if (session.revoked_at !== null) return "revoked";
  if (Date.parse(session.expires_at) <= now.getTime()) return "expired";
  if (Date.parse(session.last_seen_at) + idleMs <= now.getTime()) return "idle";
  return "active";
}

/** When the session ends for inactivity, unless it is used again (never after its absolute end). */
export function idleEnd(session: ConsoleSessionRecord, idleMs: number): string {
  const idle = Date.parse(session.last_seen_at) + idleMs;
  return new Date(Math.min(idle, Date.parse(session.expires_at))).toISOString();
}
