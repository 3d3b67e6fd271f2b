// The catalogue's SQL, written once for both backends. What cannot be said the same way on SQLite and PostgreSQL
// (bytewise collation, list parameters, the writers' lock, how a document's chunks go in) is data per dialect here,
// so the one implementation in catalogue-store.ts never branches on the backend for its queries.
import type { Dialect } from "../store/sql.js";

/** What one dialect says its own way. */
export interface CatalogueDialectSql {
  /** Appended to a column or parameter compared or ordered bytewise (SQLite's default BINARY already is). */
  bytewise: string;
  /** A subquery yielding the texts of a JSON array parameter `$1`. */
  textList: string;
  /** A subquery yielding the integers of a JSON array parameter `$1`. */
  integerList: string;
  /** Taken first by every write, so that writers of all replicas go one at a time (none on SQLite). */
  writeLock: string | undefined;
  /** Run last in every write, to signal followers when it commits (none on SQLite). */
  afterWrite: string | undefined;
  /** Keeps the newest `$1` tombstones (SQLite needs a LIMIT before an OFFSET). */
  pruneTombstones: string;
}

/** The NOTIFY channel every catalogue write signals on (after commit). */
export const CATALOGUE_CHANNEL = "ivoai_context";

export const DIALECT_SQL: Record<Dialect, CatalogueDialectSql> = {
  sqlite: {
    bytewise: "",
    textList: "SELECT value FROM json_each($1)",
    integerList: "SELECT value FROM json_each($1)",
    writeLock: undefined,
    afterWrite: undefined,
    pruneTombstones:
      "DELETE FROM removed_chunks WHERE seq IN (SELECT seq FROM removed_chunks ORDER BY generation DESC LIMIT -1 OFFSET $1)",
  },
  postgres: {
    bytewise: ' COLLATE "C"',
    textList: "SELECT jsonb_array_elements_text($1::jsonb)",
    integerList: "SELECT jsonb_array_elements_text($1::jsonb)::bigint",
    writeLock: "SELECT pg_advisory_xact_lock(hashtext('ivoai:catalogue'))",
    afterWrite: `SELECT pg_notify('${CATALOGUE_CHANNEL}', '')`,
    pruneTombstones:
      "DELETE FROM removed_chunks WHERE seq IN (SELECT seq FROM removed_chunks ORDER BY generation DESC OFFSET $1)",
  },
};

/** The columns of a DocumentRecord, by name. */
export const DOCUMENT_COLUMNS =
  "id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata";

/** The same statements on both backends. */
export const SQL = {
  seedMeta:
    "INSERT INTO meta (key, value) VALUES ('schema', $1), ('generation', '0'), ('instance', $2) ON CONFLICT (key) DO NOTHING",
  addConnector:
    "INSERT INTO connectors (name, type, path, created_at, last_ingest_at, allow_hardlinks) VALUES ($1, $2, $3, $4, $5, $6)",
  getConnector: "SELECT * FROM connectors WHERE name = $1",
  listConnectors: "SELECT * FROM connectors ORDER BY name",
  deleteConnector: "DELETE FROM connectors WHERE name = $1",
  markIngested: "UPDATE connectors SET last_ingest_at = $1 WHERE name = $2",
  recordIngestSummary: "UPDATE connectors SET last_ingest = $1 WHERE name = $2",
  fingerprints: "SELECT id, fingerprint FROM documents WHERE connector = $1",
  documentStates: "SELECT id, fingerprint, source_stat FROM documents WHERE connector = $1",
  // Only over the version it was found equal to, should another run have replaced it meanwhile.
  recordSourceStat: "UPDATE documents SET source_stat = $1 WHERE id = $2 AND fingerprint = $3",
  documentKey: "SELECT key FROM documents WHERE id = $1",
  upsertDocument: `INSERT INTO documents (${DOCUMENT_COLUMNS}, source_stat) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
    ON CONFLICT (id) DO UPDATE SET title = excluded.title, language = excluded.language,
      fingerprint = excluded.fingerprint, bytes = excluded.bytes, modified_at = excluded.modified_at,
      ingested_at = excluded.ingested_at, metadata = excluded.metadata, source_stat = excluded.source_stat
    RETURNING key`,
  // A document's chunks are tombstoned at this generation, then deleted.
  tombstoneChunksOf: `INSERT INTO removed_chunks (seq, generation) SELECT seq, $2 FROM chunks WHERE doc = $1
    ON CONFLICT (seq) DO UPDATE SET generation = excluded.generation`,
  deleteChunksOf: "DELETE FROM chunks WHERE doc = $1",
  deleteDocument: "DELETE FROM documents WHERE key = $1",
  chunksOfDocument: "SELECT unit_start, text FROM chunks WHERE doc = $1 ORDER BY idx",
  bumpGeneration:
    "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'generation' RETURNING value AS g",
  generation: "SELECT value FROM meta WHERE key = 'generation'",
  instance: "SELECT value FROM meta WHERE key = 'instance'",
  chunkCount: "SELECT COUNT(*) AS n FROM chunks",
  getDocument: "SELECT * FROM documents WHERE id = $1",
  getDocumentByPath: "SELECT * FROM documents WHERE connector = $1 AND rel_path = $2",
  recent: `SELECT ${DOCUMENT_COLUMNS} FROM documents ORDER BY modified_at DESC, id LIMIT $1`,
  recentOf: `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE connector = $1 ORDER BY modified_at DESC, id LIMIT $2`,
  chunkTermsAfter:
    "SELECT c.seq, c.id, c.terms, d.id AS document_id, d.connector FROM chunks c JOIN documents d ON d.key = c.doc WHERE c.seq > $1 ORDER BY c.seq LIMIT $2",
  // Whitespace-only chunks exist only to rebuild bodies; nothing to embed there.
  chunkTextsAfter: "SELECT seq, id, text FROM chunks WHERE seq > $1 AND terms <> '' ORDER BY seq LIMIT $2",
  languages: "SELECT DISTINCT language FROM documents",
  removedSince: "SELECT seq FROM removed_chunks WHERE generation > $1",
  stats: `SELECT (SELECT COUNT(*) FROM connectors) AS connectors, (SELECT COUNT(*) FROM documents) AS documents,
    (SELECT COUNT(*) FROM chunks) AS chunks, (SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM documents) AS bytes`,
} as const;

/** Statements that name the dialect's own pieces, built once per dialect. */
export function dialectStatements(d: CatalogueDialectSql) {
  const path = `rel_path${d.bytewise}`;
  const completion = `connector${d.bytewise} = $1 AND ${path} >= $2 AND ${path} < $3 AND substr(rel_path, 1, length($2)) = $2`;
  return {
    documentsByIds: `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE id IN (${d.textList})`,
    chunksBySeq: `SELECT c.seq, c.id, d.id AS document_id, c.idx, c.text FROM chunks c JOIN documents d ON d.key = c.doc WHERE c.seq IN (${d.integerList})`,
    // Row values over the (connector, rel_path) unique index: one range scan per page, bytewise on both backends.
    listDocuments: `SELECT ${DOCUMENT_COLUMNS} FROM documents WHERE (connector${d.bytewise}, ${path}) > ($1${d.bytewise}, $2${d.bytewise})
      ORDER BY connector${d.bytewise}, ${path} LIMIT $3`,
    listDocumentsFirst: `SELECT ${DOCUMENT_COLUMNS} FROM documents ORDER BY connector${d.bytewise}, ${path} LIMIT $1`,
    completePaths: `SELECT rel_path FROM documents WHERE ${completion} ORDER BY ${path} LIMIT $4`,
    countPaths: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM documents WHERE ${completion} LIMIT $4) AS matching`,
  };
}
