// Restore into a store that already holds data: rows from the backup are added, nothing is deleted or replaced.
// Each merge is one transaction, so a failure leaves the target as it was. The backup copy is only read, with
// trusted_schema off, and only the known columns are copied: its schema never reaches the target.
import { openSqlite, type SqliteDatabase } from "../../shared/native-sqlite.js";

function mergeWith(target: string, staged: string, steps: (db: SqliteDatabase) => Record<string, number>) {
  const db = openSqlite(target, { fileMustExist: true, timeout: 10_000 });
  try {
    db.pragma("trusted_schema = OFF");
    db.prepare("ATTACH DATABASE ? AS b").run(staged);
    try {
      return db.transaction(() => steps(db)).immediate();
    } finally {
      db.exec("DETACH DATABASE b");
    }
  } finally {
    db.close();
  }
}

/** `column` when the backup's table has it, else `fallback` (an older store, before a migration added it). */
function columnOr(db: SqliteDatabase, table: string, column: string, fallback: string): string {
  const columns = db.prepare("SELECT name FROM pragma_table_info(?, 'b')").all(table) as { name: string }[];
  return columns.some((row) => row.name === column) ? column : fallback;
}

const BUMP = "UPDATE main.meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation'";

/** Which connectors of a backup a catalogue merge touches (restore-plan decides). */
export interface CatalogueScope {
  /** Connector definitions to add (the target lacks them). */
  add: readonly string[];
  /** Connectors whose documents are added: the ones added and those the target has with the same definition. */
  documentsOf: readonly string[];
}

/**
 * Catalogue: the connectors in `scope.add` by name, and documents of `scope.documentsOf` by id (and by connector +
 * path) with all their chunks; a document the target already has keeps the target's version. New chunks get new
 * sequence numbers, so the lexical index sees them as additions.
 */
export function mergeCatalogue(
  target: string,
  staged: string,
  scope: CatalogueScope,
): Record<string, number> {
  return mergeWith(target, staged, (db) => {
    db.exec(
      "CREATE TEMP TABLE restore_add (name TEXT PRIMARY KEY); CREATE TEMP TABLE restore_of (name TEXT PRIMARY KEY)",
    );
    const addName = db.prepare("INSERT OR IGNORE INTO temp.restore_add (name) VALUES (?)");
    const ofName = db.prepare("INSERT OR IGNORE INTO temp.restore_of (name) VALUES (?)");
    for (const name of scope.add) addName.run(name);
    for (const name of scope.documentsOf) ofName.run(name);
    const connectors = db
      .prepare(`INSERT OR IGNORE INTO main.connectors (name, type, path, created_at, last_ingest_at, allow_hardlinks)
        SELECT name, type, path, created_at, last_ingest_at, ${columnOr(db, "connectors", "allow_hardlinks", "0")}
        FROM b.connectors WHERE name IN (SELECT name FROM temp.restore_add)`)
      .run().changes;
    db.exec(`CREATE TEMP TABLE restore_docs AS SELECT bd.key FROM b.documents bd
      WHERE bd.connector IN (SELECT name FROM temp.restore_of) AND NOT EXISTS
      (SELECT 1 FROM main.documents d WHERE d.id = bd.id OR (d.connector = bd.connector AND d.rel_path = bd.rel_path))`);
    const documents = db
      .prepare(`INSERT INTO main.documents
        (id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata)
        SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata
        FROM b.documents WHERE key IN (SELECT key FROM temp.restore_docs) ORDER BY key`)
      .run().changes;
    const chunks = db
      .prepare(`INSERT INTO main.chunks (doc, id, idx, unit_start, text, terms)
        SELECT d.key, c.id, c.idx, c.unit_start, c.text, c.terms FROM b.chunks c
        JOIN b.documents bd ON bd.key = c.doc JOIN main.documents d ON d.id = bd.id
        WHERE c.doc IN (SELECT key FROM temp.restore_docs) ORDER BY c.seq`)
      .run().changes;
    db.exec("DROP TABLE temp.restore_docs; DROP TABLE temp.restore_add; DROP TABLE temp.restore_of");
    if (documents > 0) db.exec(BUMP);
    return { connectors, documents, chunks };
  });
}

/**
 * Memory: a page the target lacks is added unless the target's history already has that version or a later one
 * (a page deleted since stays deleted); versions, approvals (by id), episodes (by event id) and the added pages'
 * graph edges are added where missing.
 */
export function mergeMemory(target: string, staged: string): Record<string, number> {
  return mergeWith(target, staged, (db) => {
    db.exec(`CREATE TEMP TABLE restore_pages AS SELECT bp.key FROM b.pages bp
      WHERE NOT EXISTS (SELECT 1 FROM main.pages p WHERE p.scope = bp.scope AND p.path = bp.path)
        AND NOT EXISTS (SELECT 1 FROM main.page_versions v
          WHERE v.scope = bp.scope AND v.path = bp.path AND v.version >= bp.version)`);
    const pages = db
      .prepare(`INSERT INTO main.pages (scope, path, title, tags, relations, expires_at, body, version, author,
          created_at, updated_at, terms, language, helpful, not_helpful, stale, wrong)
        SELECT scope, path, title, tags, relations, expires_at, body, version, author, created_at, updated_at, terms,
          language, helpful, not_helpful, stale, wrong
        FROM b.pages WHERE key IN (SELECT key FROM temp.restore_pages) ORDER BY key`)
      .run().changes;
    const edges = db
      .prepare(`INSERT OR IGNORE INTO main.edges (scope, from_path, type, to_path)
        SELECT e.scope, e.from_path, e.type, e.to_path FROM b.edges e
        JOIN b.pages bp ON bp.scope = e.scope AND bp.path = e.from_path
        WHERE bp.key IN (SELECT key FROM temp.restore_pages)`)
      .run().changes;
    db.exec("DROP TABLE temp.restore_pages");
    const versions = db
      .prepare(`INSERT OR IGNORE INTO main.page_versions
        (scope, path, version, title, body, tags, relations, expires_at, author, written_at, deleted)
        SELECT scope, path, version, title, body, tags, relations, expires_at, author, written_at, deleted
        FROM b.page_versions`)
      .run().changes;
    const approvals = db
      .prepare(`INSERT OR IGNORE INTO main.approvals (id, created_at, expires_at, status, tool, action, scope, path,
          requester, session_id, summary, diff, payload, base_version, decided_by, decided_at, reason)
        SELECT id, created_at, expires_at, status, tool, action, scope, path, requester, session_id, summary, diff,
          payload, base_version, decided_by, decided_at, reason FROM b.approvals`)
      .run().changes;
    const eventId = columnOr(db, "episodes", "event_id", "NULL") === "NULL" ? "NULL" : "be.event_id";
    const episodes = db
      .prepare(`INSERT INTO main.episodes
          (session_id, project, kind, recorded_at, valid_from, valid_to, data, credential_id, event_id)
        SELECT session_id, project, kind, recorded_at, valid_from, valid_to, data, credential_id,
          ${eventId}
        FROM b.episodes be WHERE NOT EXISTS (SELECT 1 FROM main.episodes e WHERE e.event_id = ${eventId})
        ORDER BY be.id`)
      .run().changes;
    if (pages > 0) db.exec(BUMP);
    return { pages, versions, edges, approvals, episodes };
  });
}
