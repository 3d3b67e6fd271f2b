// The context catalogue in SQLite (WAL): connector registry, normalised documents and their chunks.
// Each document's chunks are replaced inside one transaction, so a killed ingest leaves old or new, never a mix.
import type { LastIngest } from "../../protocol/console-api.js";
import { IvoaiError } from "../../shared/errors.js";
import { inList, openSqlite, statementCache } from "../../shared/native-sqlite.js";
import type { VectorStore } from "./vectors.js";

export interface ConnectorRecord {
  name: string;
  type: "filesystem" | "git";
  path: string;
  created_at: string;
  last_ingest_at: string | null;
  /** The connector also reads files with several hard links (`connector add --allow-hardlinks`). */
  allow_hardlinks: boolean;
  /** The summary of its last ingest run, complete or not; null before the first. */
  last_ingest: LastIngest | null;
}

export interface DocumentRecord {
  id: string;
  connector: string;
  rel_path: string;
  title: string;
  language: string;
  fingerprint: string;
  bytes: number;
  modified_at: string;
  ingested_at: string;
  metadata: Record<string, unknown>;
}

export interface ChunkInput {
  id: string;
  index: number;
  /** Code-unit offset of the chunk in the document text (chunks overlap; the body is rebuilt from them). */
  unitStart: number;
  text: Utf8Text;
  terms: Utf8Text;
}

/** Text as a string or as its UTF-8 bytes (ingest passes bytes: no string is made or encoded for the catalogue). */
export type Utf8Text = string | Uint8Array;

export function textOf(text: Utf8Text): string {
  return typeof text === "string"
    ? text
    : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString();
}

export interface ChunkRow {
  seq: number;
  id: string;
  document_id: string;
  idx: number;
  text: string;
}

export interface DocumentReplacement {
  document: DocumentRecord;
  /** The source file's identity and version (inode, size, times) when read, if it can be trusted to skip a re-read. */
  sourceStat?: string | undefined;
  /** Every chunk of the text in order, whitespace-only ones included, so the body can be rebuilt exactly. */
  chunks: ChunkInput[];
}

/** Where a document sits in the keyset order of listDocuments. */
export interface DocumentKey {
  connector: string;
  rel_path: string;
}

/**
 * The exclusive upper bound of the paths starting with `prefix` (a range an index can serve; the exact test is
 * the prefix comparison beside it). U+10FFFF sorts after every other character in UTF-8 and bytewise orders.
 */
export function prefixUpperBound(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/** Completion counts its matches up to this many: a keystroke never counts a whole connector. */
export const MAX_COUNTED_COMPLETIONS = 1000;

export interface CatalogueStats {
  connectors: number;
  documents: number;
  chunks: number;
  bytes: number;
}

/** The catalogue contract; async so that a PostgreSQL implementation can follow the SQLite one. */
export interface Catalogue {
  addConnector(record: ConnectorRecord): Promise<void>;
  getConnector(name: string): Promise<ConnectorRecord | undefined>;
  listConnectors(): Promise<ConnectorRecord[]>;
  deleteConnector(name: string): Promise<void>;
  markIngested(name: string, at: string): Promise<void>;
  /** Keeps the summary of a connector's latest ingest run (the console's "last ingest"). */
  recordIngestSummary(name: string, summary: LastIngest): Promise<void>;
  /** Fingerprint (pipeline version + content hash) per document of a connector, to skip unchanged ones. */
  documentFingerprints(connector: string): Promise<Map<string, string>>;
  /** Fingerprint and recorded source stat (null when none) per document of a connector, for ingest. */
  documentStates(connector: string): Promise<Map<string, { fingerprint: string; sourceStat: string | null }>>;
  /** Records the source stats of documents found unchanged by content (their files were touched). */
  recordSourceStats(
    entries: readonly { id: string; fingerprint: string; sourceStat: string }[],
  ): Promise<void>;
  /** Atomically replaces whole documents (metadata and chunks). */
  replaceDocuments(batch: readonly DocumentReplacement[]): Promise<void>;
  /** Removes documents and their chunks; returns how many went. */
  removeDocuments(ids: readonly string[]): Promise<number>;
  getDocument(id: string): Promise<(DocumentRecord & { body: string }) | undefined>;
  /** One document by its connector and relative path (what a resource URI names). */
  getDocumentByPath(
    connector: string,
    relPath: string,
  ): Promise<(DocumentRecord & { body: string }) | undefined>;
  /** Documents in (connector, rel_path) order, bytewise, after the given one: one keyset page of at most `limit`. */
  listDocuments(query: { after?: DocumentKey; limit: number }): Promise<DocumentRecord[]>;
  /**
   * Relative paths of a connector's documents that start with `prefix`, bytewise order, at most `limit`, and how
   * many match, counted up to MAX_COUNTED_COMPLETIONS.
   */
  completePaths(
    connector: string,
    prefix: string,
    limit: number,
  ): Promise<{ paths: string[]; total: number }>;
  recentDocuments(limit: number, connector?: string): Promise<DocumentRecord[]>;
  documentsByIds(ids: readonly string[]): Promise<Map<string, DocumentRecord>>;
  chunksBySeq(seqs: readonly number[]): Promise<Map<number, ChunkRow>>;
  /** Analysed terms of chunks added after `afterSeq`, in order, at most `limit`. */
  chunkTermsAfter(
    afterSeq: number,
    limit: number,
  ): Promise<{ seq: number; terms: string; document_id: string; connector: string }[]>;
  /** Texts of chunks added after `afterSeq`, in order, at most `limit` (for embedding). */
  chunkTextsAfter(afterSeq: number, limit: number): Promise<{ seq: number; id: string; text: string }[]>;
  /** Languages of the indexed documents. */
  languages(): Promise<string[]>;
  /** Chunk seqs removed after `afterGeneration`. */
  removedSince(afterGeneration: number): Promise<number[]>;
  generation(): Promise<number>;
  /** A random id given to the catalogue when it was created (a search index snapshot must match it). */
  instance(): Promise<string | undefined>;
  /** How many chunks the catalogue holds. */
  chunkCount(): Promise<number>;
  stats(): Promise<CatalogueStats>;
  /** PostgreSQL: where embeddings are shared between replicas (SQLite servers keep them in a cache file). */
  vectorStore?: VectorStore;
  /** PostgreSQL with notifications: whether the catalogue may have changed since last asked (see ChangeSignal). */
  changes?: { takeChanged(): boolean };
  /** SQLite closes at once; PostgreSQL's pool ends asynchronously. */
  close(): void | Promise<void>;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', '1'), ('generation', '0');
INSERT OR IGNORE INTO meta (key, value) VALUES ('instance', lower(hex(randomblob(16))));
CREATE TABLE IF NOT EXISTS connectors (
  name TEXT PRIMARY KEY, type TEXT NOT NULL, path TEXT NOT NULL, created_at TEXT NOT NULL, last_ingest_at TEXT,
  allow_hardlinks INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS documents (
  key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, connector TEXT NOT NULL, rel_path TEXT NOT NULL,
  title TEXT NOT NULL, language TEXT NOT NULL, fingerprint TEXT NOT NULL, bytes INTEGER NOT NULL,
  modified_at TEXT NOT NULL, ingested_at TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (connector, rel_path)
);
CREATE INDEX IF NOT EXISTS documents_ingested ON documents (ingested_at);
CREATE TABLE IF NOT EXISTS chunks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, doc INTEGER NOT NULL, id TEXT NOT NULL,
  idx INTEGER NOT NULL, unit_start INTEGER NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc);
CREATE TABLE IF NOT EXISTS removed_chunks (seq INTEGER PRIMARY KEY, generation INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS removed_chunks_generation ON removed_chunks (generation);
`;

type ConnectorRow = Omit<ConnectorRecord, "allow_hardlinks" | "last_ingest"> & {
  allow_hardlinks?: number;
  last_ingest?: string | null;
};

const connectorOf = (row: ConnectorRow): ConnectorRecord => ({
  ...row,
  allow_hardlinks: row.allow_hardlinks === 1,
  last_ingest: row.last_ingest ? (JSON.parse(row.last_ingest) as LastIngest) : null,
});

/** Chunk rows per INSERT statement. */
const CHUNK_ROWS = 32;

/** Tombstones kept for servers catching up; an older miss only leaves an entry the result join drops. */
const TOMBSTONE_RETENTION = 500_000;

/** The catalogue schema this build writes (meta.schema); a newer one is refused, never written over. */
export const CATALOGUE_SCHEMA = 1;

function refuseNewerCatalogue(db: ReturnType<typeof openSqlite>, file: string): void {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as
    | { value: string }
    | undefined;
  const version = Number(row?.value ?? CATALOGUE_SCHEMA);
  if (version > CATALOGUE_SCHEMA) {
    db.close();
    throw new IvoaiError(
      "STORE_VERSION",
      `the context catalogue ${file} is at schema version ${version}, but this ivoai knows versions up to ${CATALOGUE_SCHEMA}: it was written by a newer ivoai; upgrade ivoai (or restore a backup taken before the upgrade)`,
      { data: { store: "context", version, supported: CATALOGUE_SCHEMA } },
    );
  }
}

/** A document's row values, in the order of both catalogues' upsert statements. */
export function documentParams(d: DocumentRecord, sourceStat: string | undefined): unknown[] {
  return [
    d.id,
    d.connector,
    d.rel_path,
    d.title,
    d.language,
    d.fingerprint,
    d.bytes,
    d.modified_at,
    d.ingested_at,
    JSON.stringify(d.metadata),
    sourceStat ?? null,
  ];
}

/** The SQLite catalogue, which closes at once. */
export interface SqliteCatalogue extends Omit<Catalogue, "close"> {
  close(): void;
}

export function openSqliteCatalogue(file: string, options: { readonly?: boolean } = {}): SqliteCatalogue {
  const db = openSqlite(file, { readonly: options.readonly ?? false, timeout: 10_000 });
  if (!options.readonly) {
    // 16 KiB pages for a new catalogue (no effect on an existing one): chunk rows of 2-3 KB fill them well,
    // where 4 KiB pages left a third empty, and ingest writes and checkpoints fewer pages.
    db.pragma("page_size = 16384");
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("cache_size = -65536");
    db.pragma("temp_store = MEMORY");
    // A checkpoint every 64 MiB of log, whatever the page size.
    db.pragma(
      `wal_autocheckpoint = ${Math.ceil((64 * 1024 ** 2) / Number(db.pragma("page_size", { simple: true })))}`,
    );
    db.exec(SCHEMA);
    refuseNewerCatalogue(db, file);
    // Catalogues made before connectors had options.
    const columns = db.prepare("PRAGMA table_info(connectors)").all() as { name: string }[];
    if (!columns.some((column) => column.name === "allow_hardlinks"))
      db.exec("ALTER TABLE connectors ADD COLUMN allow_hardlinks INTEGER NOT NULL DEFAULT 0");
    // Catalogues made before re-ingests skipped unchanged files by stat: NULL means "read and hash it".
    const documentColumns = db.prepare("PRAGMA table_info(documents)").all() as { name: string }[];
    if (!documentColumns.some((column) => column.name === "source_stat")) {
      try {
        db.exec("ALTER TABLE documents ADD COLUMN source_stat TEXT");
      } catch (error) {
        if (!/duplicate column/i.test(String(error))) throw error;
      }
    }
    // Catalogues made before ingest summaries were kept: NULL until the connector's next run.
    if (!columns.some((column) => column.name === "last_ingest")) {
      try {
        db.exec("ALTER TABLE connectors ADD COLUMN last_ingest TEXT");
      } catch (error) {
        // Another process (`server ingest` beside the server) added it between the check and here.
        if (!/duplicate column/i.test(String(error))) throw error;
      }
    }
  }
  // Statements prepared on first use (and IN lists or multi-row inserts, once per length).
  const prepared = statementCache(db);
  const q = {
    addConnector: db.prepare(
      "INSERT INTO connectors (name, type, path, created_at, last_ingest_at, allow_hardlinks) VALUES (@name, @type, @path, @created_at, @last_ingest_at, @allow_hardlinks)",
    ),
    getConnector: db.prepare("SELECT * FROM connectors WHERE name = ?"),
    listConnectors: db.prepare("SELECT * FROM connectors ORDER BY name"),
    deleteConnector: db.prepare("DELETE FROM connectors WHERE name = ?"),
    markIngested: db.prepare("UPDATE connectors SET last_ingest_at = ? WHERE name = ?"),
    recordIngestSummary: db.prepare("UPDATE connectors SET last_ingest = ? WHERE name = ?"),
    fingerprints: db.prepare("SELECT id, fingerprint FROM documents WHERE connector = ?"),
    // Statements naming source_stat are prepared on first use: a read-only open of an older catalogue lacks it.
    upsertDocument: () =>
      prepared(`INSERT INTO documents
      (id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata, source_stat)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET title = excluded.title, language = excluded.language, fingerprint = excluded.fingerprint,
        bytes = excluded.bytes, modified_at = excluded.modified_at, ingested_at = excluded.ingested_at,
        metadata = excluded.metadata, source_stat = excluded.source_stat
      RETURNING key`),
    documentStates: () => prepared("SELECT id, fingerprint, source_stat FROM documents WHERE connector = ?"),
    // Only over the version it was found equal to, should another run have replaced it meanwhile.
    recordSourceStat: () => prepared("UPDATE documents SET source_stat = ? WHERE id = ? AND fingerprint = ?"),
    documentKey: db.prepare("SELECT key FROM documents WHERE id = ?"),
    deleteDocument: db.prepare("DELETE FROM documents WHERE key = ?"),
    chunkSeqsOf: db.prepare("SELECT seq FROM chunks WHERE doc = ?"),
    deleteChunksOf: db.prepare("DELETE FROM chunks WHERE doc = ?"),
    chunksOfDocument: db.prepare("SELECT unit_start, text FROM chunks WHERE doc = ? ORDER BY idx"),
    tombstone: db.prepare("INSERT OR REPLACE INTO removed_chunks (seq, generation) VALUES (?, ?)"),
    pruneTombstones: db.prepare(
      "DELETE FROM removed_chunks WHERE seq IN (SELECT seq FROM removed_chunks ORDER BY generation DESC LIMIT -1 OFFSET ?)",
    ),
    generation: db.prepare("SELECT CAST(value AS INTEGER) AS g FROM meta WHERE key = 'generation'"),
    instance: db.prepare("SELECT value FROM meta WHERE key = 'instance'"),
    chunkCount: db.prepare("SELECT COUNT(*) AS n FROM chunks"),
    bumpGeneration: db.prepare(
      "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) WHERE key = 'generation' RETURNING CAST(value AS INTEGER) AS g",
    ),
    getDocument: db.prepare("SELECT * FROM documents WHERE id = ?"),
    getDocumentByPath: db.prepare("SELECT * FROM documents WHERE connector = ? AND rel_path = ?"),
    // Row values over the (connector, rel_path) unique index: one range scan per page.
    listDocuments: db.prepare(
      "SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata FROM documents WHERE (connector, rel_path) > (?, ?) ORDER BY connector, rel_path LIMIT ?",
    ),
    listDocumentsFirst: db.prepare(
      "SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata FROM documents ORDER BY connector, rel_path LIMIT ?",
    ),
    completePaths: db.prepare(
      "SELECT rel_path FROM documents WHERE connector = ? AND rel_path >= ? AND rel_path < ? AND substr(rel_path, 1, length(?)) = ? ORDER BY rel_path LIMIT ?",
    ),
    countPaths: db.prepare(
      "SELECT COUNT(*) AS n FROM (SELECT 1 FROM documents WHERE connector = ? AND rel_path >= ? AND rel_path < ? AND substr(rel_path, 1, length(?)) = ? LIMIT ?)",
    ),
    recent: db.prepare(
      "SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata FROM documents ORDER BY modified_at DESC, id LIMIT ?",
    ),
    recentOf: db.prepare(
      "SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata FROM documents WHERE connector = ? ORDER BY modified_at DESC, id LIMIT ?",
    ),
    chunkTermsAfter: db.prepare(
      "SELECT c.seq, c.terms, d.id AS document_id, d.connector FROM chunks c JOIN documents d ON d.key = c.doc WHERE c.seq > ? ORDER BY c.seq LIMIT ?",
    ),
    // Whitespace-only chunks exist only to rebuild bodies; nothing to embed there.
    chunkTextsAfter: db.prepare(
      "SELECT seq, id, text FROM chunks WHERE seq > ? AND terms != '' ORDER BY seq LIMIT ?",
    ),
    languages: db.prepare("SELECT DISTINCT language FROM documents"),
    removedSince: db.prepare("SELECT seq FROM removed_chunks WHERE generation > ?"),
    stats:
      db.prepare(`SELECT (SELECT COUNT(*) FROM connectors) AS connectors, (SELECT COUNT(*) FROM documents) AS documents,
      (SELECT COUNT(*) FROM chunks) AS chunks, (SELECT COALESCE(SUM(bytes), 0) FROM documents) AS bytes`),
  };

  const dropChunks = (key: number, generation: number) => {
    for (const row of q.chunkSeqsOf.all(key) as { seq: number }[]) q.tombstone.run(row.seq, generation);
    q.deleteChunksOf.run(key);
  };
  const keyOf = (id: string) => (q.documentKey.get(id) as { key: number } | undefined)?.key;
  const bump = () => (q.bumpGeneration.get() as { g: number }).g;

  // A document's chunks go in by multi-row INSERTs of up to CHUNK_ROWS rows (same rows, same seq order): per
  // statement, not per row, SQLite's AUTOINCREMENT bookkeeping and the statement's run cost.
  // Bytes go in as TEXT (their UTF-8 taken as is): bound as they are, a blob.
  const insertChunksOf = (rows: number) =>
    prepared(
      `INSERT INTO chunks (doc, id, idx, unit_start, text, terms) VALUES ${Array.from({ length: rows }, () => "(?, ?, ?, ?, CAST(? AS TEXT), CAST(? AS TEXT))").join(", ")}`,
    );
  const insertChunks = (key: number, chunks: readonly ChunkInput[]) => {
    for (let from = 0; from < chunks.length; from += CHUNK_ROWS) {
      const group = chunks.slice(from, from + CHUNK_ROWS);
      const params: unknown[] = [];
      for (const chunk of group)
        params.push(key, chunk.id, chunk.index, chunk.unitStart, chunk.text, chunk.terms);
      insertChunksOf(group.length).run(params);
    }
  };

  const replace = db.transaction((batch: readonly DocumentReplacement[]) => {
    const generation = bump();
    for (const { document: d, chunks, sourceStat } of batch) {
      const existing = keyOf(d.id);
      if (existing !== undefined) dropChunks(existing, generation);
      const { key } = q.upsertDocument().get(...documentParams(d, sourceStat)) as { key: number };
      insertChunks(key, chunks);
    }
    q.pruneTombstones.run(TOMBSTONE_RETENTION);
  });
  const remove = db.transaction((ids: readonly string[]) => {
    const generation = bump();
    let removed = 0;
    for (const id of ids) {
      const key = keyOf(id);
      if (key === undefined) continue;
      dropChunks(key, generation);
      removed += q.deleteDocument.run(key).changes;
    }
    return removed;
  });

  const recordSourceStats = db.transaction(
    (entries: readonly { id: string; fingerprint: string; sourceStat: string }[]) => {
      const statement = q.recordSourceStat();
      for (const entry of entries) statement.run(entry.sourceStat, entry.id, entry.fingerprint);
    },
  );

  const documentFromRow = (row: Record<string, unknown>): DocumentRecord => {
    const { key: _key, source_stat: _sourceStat, ...rest } = row;
    return { ...(rest as unknown as DocumentRecord), metadata: JSON.parse(String(row.metadata)) };
  };
  /** The text rebuilt from its overlapping chunks: each adds what lies past the text so far. */
  const bodyOf = (key: number): string => {
    let body = "";
    for (const chunk of q.chunksOfDocument.all(key) as { unit_start: number; text: string }[]) {
      body += chunk.text.slice(body.length - chunk.unit_start);
    }
    return body;
  };

  return {
    async addConnector(record) {
      const { last_ingest: _summary, ...fields } = record;
      q.addConnector.run({ ...fields, allow_hardlinks: record.allow_hardlinks ? 1 : 0 });
    },
    async getConnector(name) {
      const row = q.getConnector.get(name) as ConnectorRow | undefined;
      return row && connectorOf(row);
    },
    async listConnectors() {
      return (q.listConnectors.all() as ConnectorRow[]).map(connectorOf);
    },
    async deleteConnector(name) {
      q.deleteConnector.run(name);
    },
    async markIngested(name, at) {
      q.markIngested.run(at, name);
    },
    async recordIngestSummary(name, summary) {
      q.recordIngestSummary.run(JSON.stringify(summary), name);
    },
    async documentFingerprints(connector) {
      const rows = q.fingerprints.all(connector) as { id: string; fingerprint: string }[];
      return new Map(rows.map((row) => [row.id, row.fingerprint]));
    },
    async documentStates(connector) {
      const rows = q.documentStates().all(connector) as {
        id: string;
        fingerprint: string;
        source_stat: string | null;
      }[];
      return new Map(
        rows.map((row) => [row.id, { fingerprint: row.fingerprint, sourceStat: row.source_stat }]),
      );
    },
    async recordSourceStats(entries) {
      if (entries.length > 0) recordSourceStats(entries);
    },
    async replaceDocuments(batch) {
      if (batch.length > 0) replace(batch);
    },
    async removeDocuments(ids) {
      return ids.length > 0 ? remove(ids) : 0;
    },
    async getDocument(id) {
      const row = q.getDocument.get(id) as Record<string, unknown> | undefined;
      return row ? { ...documentFromRow(row), body: bodyOf(Number(row.key)) } : undefined;
    },
    async getDocumentByPath(connector, relPath) {
      const row = q.getDocumentByPath.get(connector, relPath) as Record<string, unknown> | undefined;
      return row ? { ...documentFromRow(row), body: bodyOf(Number(row.key)) } : undefined;
    },
    async listDocuments({ after, limit }) {
      const rows = (
        after ? q.listDocuments.all(after.connector, after.rel_path, limit) : q.listDocumentsFirst.all(limit)
      ) as Record<string, unknown>[];
      return rows.map(documentFromRow);
    },
    async completePaths(connector, prefix, limit) {
      const range = [connector, prefix, prefixUpperBound(prefix), prefix, prefix];
      const paths = (q.completePaths.all(...range, limit) as { rel_path: string }[]).map(
        (row) => row.rel_path,
      );
      return { paths, total: (q.countPaths.get(...range, MAX_COUNTED_COMPLETIONS) as { n: number }).n };
    },
    async recentDocuments(limit, connector) {
      const rows = (connector ? q.recentOf.all(connector, limit) : q.recent.all(limit)) as Record<
        string,
        unknown
      >[];
      return rows.map(documentFromRow);
    },
    async documentsByIds(ids) {
      const out = new Map<string, DocumentRecord>();
      if (ids.length === 0) return out;
      const rows = prepared(
        `SELECT id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata FROM documents WHERE id IN (${inList(ids)})`,
      ).all(...ids) as Record<string, unknown>[];
      for (const row of rows) out.set(String(row.id), documentFromRow(row));
      return out;
    },
    async chunksBySeq(seqs) {
      const out = new Map<number, ChunkRow>();
      if (seqs.length === 0) return out;
      const rows = prepared(
        `SELECT c.seq, c.id, d.id AS document_id, c.idx, c.text FROM chunks c JOIN documents d ON d.key = c.doc WHERE c.seq IN (${inList(seqs)})`,
      ).all(...seqs) as ChunkRow[];
      for (const row of rows) out.set(row.seq, row);
      return out;
    },
    async chunkTermsAfter(afterSeq, limit) {
      return q.chunkTermsAfter.all(afterSeq, limit) as {
        seq: number;
        terms: string;
        document_id: string;
        connector: string;
      }[];
    },
    async chunkTextsAfter(afterSeq, limit) {
      return q.chunkTextsAfter.all(afterSeq, limit) as { seq: number; id: string; text: string }[];
    },
    async languages() {
      return (q.languages.all() as { language: string }[]).map((row) => row.language);
    },
    async removedSince(afterGeneration) {
      return (q.removedSince.all(afterGeneration) as { seq: number }[]).map((row) => row.seq);
    },
    async generation() {
      return (q.generation.get() as { g: number }).g;
    },
    async instance() {
      return (q.instance.get() as { value: string } | undefined)?.value;
    },
    async chunkCount() {
      return (q.chunkCount.get() as { n: number }).n;
    },
    async stats() {
      return q.stats.get() as CatalogueStats;
    },
    close: () => {
      db.close();
    },
  };
}
