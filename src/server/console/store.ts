// Web console sign-in state: single-use sign-in codes and browser sessions, in the console store (a SQLite file
// beside the enrollment state, or the ivoai_console schema every replica shares on PostgreSQL, so a session
// opened through one replica is valid on all). Codes and session tokens are stored only as SHA-256 hashes; a
// session's CSRF token is derived from its token, so nothing else is kept.
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { CONSOLE_CODE_PREFIX, type ConsoleRole } from "../../protocol/console-api.js";
import { newId, newSecret, sha256Hex } from "../../shared/tokens.js";
import { type StoreBackend, sqliteFileOf } from "../store/backend.js";
import { type Migration, migrate } from "../store/migrations.js";
import type { SqlDatabase } from "../store/sql.js";

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
  createCode(input: { role: ConsoleRole; name: string; ttlMs: number; now: Date }): Promise<{
    code: string;
    view: ConsoleCodeView;
  }>;
  /**
   * Spends a valid code exactly once and opens a session ending `absoluteMs` from now; undefined for an unknown,
   * used or expired code (the reason is not told apart).
   */
  exchangeCode(
    code: string,
    now: Date,
    absoluteMs: number,
  ): Promise<{ session: ConsoleSessionRecord; token: string } | undefined>;
  /** The session a token belongs to, whatever its state (the caller checks revocation and expiry). */
  findSession(token: string): Promise<ConsoleSessionRecord | undefined>;
  /** Records activity (moves the idle end). */
  touch(id: string, at: Date): Promise<void>;
  /** Revokes one session; undefined for an unknown id. */
  revoke(id: string, at: Date): Promise<ConsoleSessionRecord | undefined>;
  /** Revokes every session not yet revoked; returns how many. */
  revokeAll(at: Date): Promise<number>;
  /** Every session still stored, newest first. */
  listSessions(): Promise<ConsoleSessionRecord[]>;
  /** Drops codes that ended, and sessions that ended (revoked, idle or absolute) more than a day ago. */
  prune(now: Date, idleMs: number): Promise<void>;
  /** Closes the database. */
  close(): Promise<void>;
}

/** The console store's schema versions. Version 1 is the SQLite file's schema before versioning (adopted). */
export const CONSOLE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "codes and sessions",
    up: {
      sqlite: `
CREATE TABLE IF NOT EXISTS codes (
  code_sha256 TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, used_at TEXT
);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT NOT NULL, expires_at TEXT NOT NULL, last_seen_at TEXT NOT NULL, revoked_at TEXT
);`,
      // Times and ids compare in code-point order, as on SQLite, whatever the database's collation.
      postgres: `
CREATE TABLE IF NOT EXISTS codes (
  code_sha256 TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, expires_at TEXT COLLATE "C" NOT NULL, used_at TEXT COLLATE "C"
);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT COLLATE "C" PRIMARY KEY, token_sha256 TEXT NOT NULL UNIQUE, role TEXT NOT NULL, name TEXT NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL, expires_at TEXT COLLATE "C" NOT NULL,
  last_seen_at TEXT COLLATE "C" NOT NULL, revoked_at TEXT COLLATE "C"
);`,
    },
  },
];

const SESSION_COLUMNS = "id, role, name, created_at, expires_at, last_seen_at, revoked_at";
const DAY_MS = 86_400_000;

/** The console store's SQLite file, beside the enrollment state (both are who may use the server). */
export function consoleDbPath(paths: ServerPaths): string {
  return sqliteFileOf(paths, "console");
}

/**
 * The console store of a server tree on its configured backend. A SQLite file is the server user's alone:
 * created 0600 in a 0700 folder before SQLite opens it (its -wal and -shm files take the database file's mode).
 */
export async function openConsoleStoreOn(backend: StoreBackend, paths: ServerPaths): Promise<ConsoleStore> {
  if (backend.kind === "sqlite") {
    const file = consoleDbPath(paths);
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    closeSync(openSync(file, "a", 0o600));
    chmodSync(file, 0o600);
  }
  return openConsoleStore(await backend.open("console"));
}

/** The console store over `db` (migrated first); closing the store closes `db`. */
export async function openConsoleStore(db: SqlDatabase): Promise<ConsoleStore> {
  try {
    await migrate(db, "console", CONSOLE_MIGRATIONS);
  } catch (error) {
    await db.close();
    throw error;
  }
  const sessionById = (id: string) =>
    db.get<ConsoleSessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);

  return {
    async createCode({ role, name, ttlMs, now }) {
      const code = newSecret(CONSOLE_CODE_PREFIX);
      const view: ConsoleCodeView = {
        id: newId("ccode_"),
        role,
        name,
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + ttlMs).toISOString(),
        used_at: null,
      };
      await db.run(
        `INSERT INTO codes (code_sha256, id, role, name, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [sha256Hex(code), view.id, role, name, view.created_at, view.expires_at],
      );
      return { code, view };
    },
    exchangeCode(code, now, absoluteMs) {
      const at = now.toISOString();
      return db.transaction(async (tx) => {
        // Spent in the same statement that checks it: two racing exchanges (on any replica) cannot both win.
        const spent = await tx.get<{ role: ConsoleRole; name: string }>(
          `UPDATE codes SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL AND expires_at > $1
           RETURNING role, name`,
          [at, sha256Hex(code)],
        );
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
        await tx.run(
          `INSERT INTO sessions (id, token_sha256, role, name, created_at, expires_at, last_seen_at)
           VALUES ($1, $2, $3, $4, $5, $6, $5)`,
          [session.id, sha256Hex(token), session.role, session.name, at, session.expires_at],
        );
        return { session, token };
      });
    },
    async findSession(token) {
      // Looked up by the token's SHA-256: the lookup's timing can tell nothing about the token itself.
      return db.get<ConsoleSessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE token_sha256 = $1`, [
        sha256Hex(token),
      ]);
    },
    async touch(id, at) {
      await db.run("UPDATE sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $1", [
        at.toISOString(),
        id,
      ]);
    },
    async revoke(id, at) {
      await db.run("UPDATE sessions SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2", [
        at.toISOString(),
        id,
      ]);
      return sessionById(id);
    },
    async revokeAll(at) {
      return (
        await db.run("UPDATE sessions SET revoked_at = $1 WHERE revoked_at IS NULL", [at.toISOString()])
      ).changes;
    },
    listSessions() {
      return db.all<ConsoleSessionRecord>(
        `SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY created_at DESC, id`,
      );
    },
    async prune(now, idleMs) {
      const at = now.toISOString();
      const dayAgo = new Date(now.getTime() - DAY_MS).toISOString();
      await db.transaction(async (tx) => {
        await tx.run("DELETE FROM codes WHERE expires_at <= $1 OR used_at IS NOT NULL", [at]);
        await tx.run("DELETE FROM sessions WHERE expires_at < $1 OR revoked_at < $1 OR last_seen_at < $2", [
          dayAgo,
          new Date(now.getTime() - DAY_MS - idleMs).toISOString(),
        ]);
      });
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
