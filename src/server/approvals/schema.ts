// The approvals table: requests and their decisions. It lives in the memory database (schema ivoai_memory on
// PostgreSQL), because an approved change is applied in the same transaction that marks it applied.

/** Columns and indexes as every release since the first created them (SQLite texts kept byte for byte). */
export const APPROVALS_DDL = `
CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, status TEXT NOT NULL, tool TEXT NOT NULL,
  action TEXT NOT NULL, scope TEXT NOT NULL, path TEXT NOT NULL, requester TEXT NOT NULL, session_id TEXT,
  summary TEXT NOT NULL, diff TEXT NOT NULL, payload TEXT NOT NULL, base_version INTEGER NOT NULL,
  decided_by TEXT, decided_at TEXT, reason TEXT
);
CREATE INDEX IF NOT EXISTS approvals_status ON approvals (status, created_at);
CREATE INDEX IF NOT EXISTS approvals_created ON approvals (created_at, id);
CREATE INDEX IF NOT EXISTS approvals_requester ON approvals (requester, status);
`;
