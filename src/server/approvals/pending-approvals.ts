// Pending approval ids read straight from the SQLite memory database, read-only and without the memory service:
// what shell completion offers for `ivoai server approvals show|approve|reject`. Metadata only, no body or diff.
import { loadServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { sqliteFileOf } from "../store/backend.js";

/** A pending request as completion shows it. */
export interface PendingApproval {
  id: string;
  tool: string;
  created_at: string;
}

/**
 * The newest `limit` unexpired pending requests of the tree at `paths`, opened read-only (nothing is created,
 * migrated or expired). A PostgreSQL store is not asked: completion would need its password; it gets none.
 */
export async function pendingApprovals(
  paths: ServerPaths,
  now: Date,
  limit = 100,
): Promise<PendingApproval[]> {
  const config = await loadServerConfig(paths.configFile);
  if (config.store.backend !== "sqlite") return [];
  const db = openSqlite(sqliteFileOf(paths, "memory"), { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 200");
    return db
      .prepare(
        "SELECT id, tool, created_at FROM approvals WHERE status = 'pending' AND expires_at > ? " +
          "ORDER BY created_at DESC, id DESC LIMIT ?",
      )
      .all(now.toISOString(), limit) as PendingApproval[];
  } finally {
    db.close();
  }
}
