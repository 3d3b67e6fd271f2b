// The one catalogue implementation, on the shared SQL layer: SQLite (the embedded default) or PostgreSQL (shared by
// every gateway replica). Each document's chunks are replaced inside one transaction, so a killed ingest leaves old
// or new, never a mix. On PostgreSQL every write takes one advisory lock first, so writers from all replicas go one
// at a time: chunk seqs and the generation then grow in commit order, which is what lets each replica's index
// catch up by "seq above the highest seen" without ever missing a row committed late.
import type { LastIngest } from "../../protocol/console-api.js";
import type { ChangeSignal } from "../store/postgres.js";
import type { Dialect, SqlDatabase, SqlExecutor } from "../store/sql.js";
import {
  type Catalogue,
  type CatalogueStats,
  type ChunkInput,
  type ChunkRow,
  type ConnectorRecord,
  type DocumentRecord,
  type DocumentReplacement,
  MAX_COUNTED_COMPLETIONS,
  prefixUpperBound,
  textOf,
} from "./catalogue-model.js";
import { prepareCatalogue } from "./catalogue-schema.js";
import { type CatalogueDialectSql, DIALECT_SQL, dialectStatements, SQL } from "./catalogue-sql.js";
import type { VectorStore } from "./vectors.js";

/** Tombstones kept for indexes catching up; an older miss only leaves an entry the result join drops. */
const TOMBSTONE_RETENTION = 500_000;

/** Chunk rows per multi-row INSERT on SQLite. */
const SQLITE_CHUNK_ROWS = 32;

type Statement = { sql: string; params: unknown[] };

/** How a document's chunks go in: the one write whose shape differs by backend, for speed on each. */
type ChunkInsert = (key: number, chunks: readonly ChunkInput[]) => Statement[];

const sqliteChunkSql = new Map<number, string>();
/** `rows` rows of (doc, id, idx, unit_start, text, terms); UTF-8 bytes go in as TEXT, taken as they are. */
function sqliteChunkStatement(rows: number): string {
  let sql = sqliteChunkSql.get(rows);
  if (!sql) {
    const values = Array.from({ length: rows }, (_, row) => {
      const n = row * 6;
      return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, CAST($${n + 5} AS TEXT), CAST($${n + 6} AS TEXT))`;
    });
    sql = `INSERT INTO chunks (doc, id, idx, unit_start, text, terms) VALUES ${values.join(", ")}`;
    sqliteChunkSql.set(rows, sql);
  }
  return sql;
}

/**
 * SQLite: multi-row INSERTs of up to SQLITE_CHUNK_ROWS rows (same rows, same seq order), so AUTOINCREMENT's
 * bookkeeping and the statement's run cost are paid per statement, not per row. Bytes are bound as they are.
 */
function sqliteChunkInserts(key: number, chunks: readonly ChunkInput[]): Statement[] {
  const statements: Statement[] = [];
  for (let from = 0; from < chunks.length; from += SQLITE_CHUNK_ROWS) {
    const group = chunks.slice(from, from + SQLITE_CHUNK_ROWS);
    const params: unknown[] = [];
    for (const chunk of group)
      params.push(key, chunk.id, chunk.index, chunk.unitStart, chunk.text, chunk.terms);
    statements.push({ sql: sqliteChunkStatement(group.length), params });
  }
  return statements;
}

/** PostgreSQL: one statement per document; rows go in array order, so seqs follow chunk order. */
function postgresChunkInserts(key: number, chunks: readonly ChunkInput[]): Statement[] {
  if (chunks.length === 0) return [];
  return [
    {
      sql: `INSERT INTO chunks (doc, id, idx, unit_start, text, terms)
        SELECT $1, c.id, c.idx, c.unit_start, c.text, c.terms
        FROM unnest($2::text[], $3::int[], $4::int[], $5::text[], $6::text[]) WITH ORDINALITY
          AS c(id, idx, unit_start, text, terms, n) ORDER BY c.n`,
      params: [
        key,
        chunks.map((chunk) => chunk.id),
        chunks.map((chunk) => chunk.index),
        chunks.map((chunk) => chunk.unitStart),
        chunks.map((chunk) => textOf(chunk.text)),
        chunks.map((chunk) => textOf(chunk.terms)),
      ],
    },
  ];
}

const CHUNK_INSERTS: Record<Dialect, ChunkInsert> = {
  sqlite: sqliteChunkInserts,
  postgres: postgresChunkInserts,
};

/** An open catalogue: its connection and the SQL of its dialect. */
interface CatalogueState {
  db: SqlDatabase;
  dialect: CatalogueDialectSql;
  statements: ReturnType<typeof dialectStatements>;
  insertChunks: ChunkInsert;
}

type ConnectorRow = Omit<ConnectorRecord, "allow_hardlinks" | "last_ingest"> & {
  allow_hardlinks?: number;
  last_ingest?: string | null;
};

function connectorOf(row: ConnectorRow): ConnectorRecord {
  return {
    ...row,
    allow_hardlinks: row.allow_hardlinks === 1,
    last_ingest: row.last_ingest ? (JSON.parse(row.last_ingest) as LastIngest) : null,
  };
}

function documentOf(row: Record<string, unknown>): DocumentRecord {
  return {
    id: String(row.id),
    connector: String(row.connector),
    rel_path: String(row.rel_path),
    title: String(row.title),
    language: String(row.language),
    fingerprint: String(row.fingerprint),
    bytes: Number(row.bytes),
    modified_at: String(row.modified_at),
    ingested_at: String(row.ingested_at),
    metadata: JSON.parse(String(row.metadata)),
  };
}

/** A write transaction, after every other replica's writes on PostgreSQL (see the header). */
function write<T>(state: CatalogueState, work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  const { writeLock, afterWrite } = state.dialect;
  return state.db.transaction(async (tx) => {
    if (writeLock) await tx.get(writeLock);
    const result = await work(tx);
    // Delivered to every listening replica when this commits (and not at all if it rolls back).
    if (afterWrite) await tx.get(afterWrite);
    return result;
  });
}

async function bumpGeneration(tx: SqlExecutor): Promise<number> {
  return Number((await tx.get<{ g: string | number }>(SQL.bumpGeneration))?.g);
}

async function documentKey(tx: SqlExecutor, id: string): Promise<number | undefined> {
  const row = await tx.get<{ key: number }>(SQL.documentKey, [id]);
  return row === undefined ? undefined : Number(row.key);
}

/** Tombstones a document's chunks at `generation` (for indexes to drop them), then deletes them. */
async function dropChunks(tx: SqlExecutor, key: number, generation: number): Promise<void> {
  await tx.run(SQL.tombstoneChunksOf, [key, generation]);
  await tx.run(SQL.deleteChunksOf, [key]);
}

async function upsertDocument(tx: SqlExecutor, entry: DocumentReplacement): Promise<number> {
  const d = entry.document;
  const row = await tx.get<{ key: number }>(SQL.upsertDocument, [
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
    entry.sourceStat ?? null,
  ]);
  return Number(row?.key);
}

async function replaceDocuments(state: CatalogueState, batch: readonly DocumentReplacement[]): Promise<void> {
  if (batch.length === 0) return;
  await write(state, async (tx) => {
    const generation = await bumpGeneration(tx);
    for (const entry of batch) {
      const existing = await documentKey(tx, entry.document.id);
      if (existing !== undefined) await dropChunks(tx, existing, generation);
      const key = await upsertDocument(tx, entry);
      for (const { sql, params } of state.insertChunks(key, entry.chunks)) await tx.run(sql, params);
    }
    await tx.run(state.dialect.pruneTombstones, [TOMBSTONE_RETENTION]);
  });
}

async function removeDocuments(state: CatalogueState, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  return write(state, async (tx) => {
    const generation = await bumpGeneration(tx);
    let removed = 0;
    for (const id of ids) {
      const key = await documentKey(tx, id);
      if (key === undefined) continue;
      await dropChunks(tx, key, generation);
      removed += (await tx.run(SQL.deleteDocument, [key])).changes;
    }
    return removed;
  });
}

async function recordSourceStats(
  state: CatalogueState,
  entries: readonly { id: string; fingerprint: string; sourceStat: string }[],
): Promise<void> {
  if (entries.length === 0) return;
  await state.db.transaction(async (tx) => {
    for (const entry of entries)
      await tx.run(SQL.recordSourceStat, [entry.sourceStat, entry.id, entry.fingerprint]);
  });
}

/** The document with its text rebuilt from its overlapping chunks (each adds what lies past the text so far). */
async function withBody(db: SqlExecutor, row: Record<string, unknown> | undefined) {
  if (!row) return undefined;
  let body = "";
  for (const chunk of await db.all<{ unit_start: number; text: string }>(SQL.chunksOfDocument, [row.key]))
    body += chunk.text.slice(body.length - chunk.unit_start);
  return { ...documentOf(row), body };
}

async function documents(db: SqlExecutor, sql: string, params: readonly unknown[]) {
  return (await db.all<Record<string, unknown>>(sql, params)).map(documentOf);
}

async function completePaths(state: CatalogueState, connector: string, prefix: string, limit: number) {
  const range = [connector, prefix, prefixUpperBound(prefix)];
  const rows = await state.db.all<{ rel_path: string }>(state.statements.completePaths, [...range, limit]);
  const count = await state.db.get<{ n: number }>(state.statements.countPaths, [
    ...range,
    MAX_COUNTED_COMPLETIONS,
  ]);
  return { paths: rows.map((row) => row.rel_path), total: Number(count?.n ?? 0) };
}

async function documentsByIds(state: CatalogueState, ids: readonly string[]) {
  const out = new Map<string, DocumentRecord>();
  if (ids.length === 0) return out;
  for (const d of await documents(state.db, state.statements.documentsByIds, [JSON.stringify(ids)]))
    out.set(d.id, d);
  return out;
}

async function chunksBySeq(state: CatalogueState, seqs: readonly number[]) {
  const out = new Map<number, ChunkRow>();
  if (seqs.length === 0) return out;
  for (const row of await state.db.all<ChunkRow>(state.statements.chunksBySeq, [JSON.stringify(seqs)]))
    out.set(row.seq, row);
  return out;
}

async function stats(db: SqlExecutor): Promise<CatalogueStats> {
  const row = await db.get<Record<keyof CatalogueStats, number>>(SQL.stats);
  return {
    connectors: Number(row?.connectors),
    documents: Number(row?.documents),
    chunks: Number(row?.chunks),
    bytes: Number(row?.bytes),
  };
}

async function metaValue(db: SqlExecutor, sql: string): Promise<string | undefined> {
  return (await db.get<{ value: string }>(sql))?.value;
}

/** The connector registry's methods. */
function connectorMethods(db: SqlDatabase) {
  return {
    async addConnector(record: ConnectorRecord) {
      const { name, type, path, created_at, last_ingest_at, allow_hardlinks } = record;
      await db.run(SQL.addConnector, [name, type, path, created_at, last_ingest_at, allow_hardlinks ? 1 : 0]);
    },
    getConnector: async (name: string) => {
      const row = await db.get<ConnectorRow>(SQL.getConnector, [name]);
      return row && connectorOf(row);
    },
    listConnectors: async () => (await db.all<ConnectorRow>(SQL.listConnectors)).map(connectorOf),
    async deleteConnector(name: string) {
      await db.run(SQL.deleteConnector, [name]);
    },
    async markIngested(name: string, at: string) {
      await db.run(SQL.markIngested, [at, name]);
    },
    async recordIngestSummary(name: string, summary: LastIngest) {
      await db.run(SQL.recordIngestSummary, [JSON.stringify(summary), name]);
    },
  };
}

/** Documents: what ingest reads and writes, and the lookups of search and resources. */
function documentMethods(state: CatalogueState) {
  const { db, statements: s } = state;
  return {
    documentFingerprints: async (connector: string) =>
      new Map(
        (await db.all<{ id: string; fingerprint: string }>(SQL.fingerprints, [connector])).map((row) => [
          row.id,
          row.fingerprint,
        ]),
      ),
    documentStates: async (connector: string) =>
      new Map(
        (
          await db.all<{ id: string; fingerprint: string; source_stat: string | null }>(SQL.documentStates, [
            connector,
          ])
        ).map((row) => [row.id, { fingerprint: row.fingerprint, sourceStat: row.source_stat }]),
      ),
    recordSourceStats: (entries: Parameters<Catalogue["recordSourceStats"]>[0]) =>
      recordSourceStats(state, entries),
    replaceDocuments: (batch: readonly DocumentReplacement[]) => replaceDocuments(state, batch),
    removeDocuments: (ids: readonly string[]) => removeDocuments(state, ids),
    getDocument: async (id: string) => withBody(db, await db.get(SQL.getDocument, [id])),
    getDocumentByPath: async (connector: string, relPath: string) =>
      withBody(db, await db.get(SQL.getDocumentByPath, [connector, relPath])),
    listDocuments: ({ after, limit }: Parameters<Catalogue["listDocuments"]>[0]) =>
      after
        ? documents(db, s.listDocuments, [after.connector, after.rel_path, limit])
        : documents(db, s.listDocumentsFirst, [limit]),
    completePaths: (connector: string, prefix: string, limit: number) =>
      completePaths(state, connector, prefix, limit),
    recentDocuments: (limit: number, connector?: string) =>
      connector ? documents(db, SQL.recentOf, [connector, limit]) : documents(db, SQL.recent, [limit]),
    documentsByIds: (ids: readonly string[]) => documentsByIds(state, ids),
    languages: async () => (await db.all<{ language: string }>(SQL.languages)).map((row) => row.language),
  };
}

/** Chunks and the change feed the search indexes follow. */
function chunkMethods(state: CatalogueState) {
  const { db } = state;
  return {
    chunksBySeq: (seqs: readonly number[]) => chunksBySeq(state, seqs),
    chunkTermsAfter: (afterSeq: number, limit: number) =>
      db.all<{ seq: number; id: string; terms: string; document_id: string; connector: string }>(
        SQL.chunkTermsAfter,
        [afterSeq, limit],
      ),
    chunkTextsAfter: (afterSeq: number, limit: number) =>
      db.all<{ seq: number; id: string; text: string }>(SQL.chunkTextsAfter, [afterSeq, limit]),
    removedSince: async (afterGeneration: number) =>
      (await db.all<{ seq: number }>(SQL.removedSince, [afterGeneration])).map((row) => Number(row.seq)),
    generation: async () => Number(await metaValue(db, SQL.generation)),
    instance: () => metaValue(db, SQL.instance),
    chunkCount: async () => Number((await db.get<{ n: number }>(SQL.chunkCount))?.n),
    stats: () => stats(db),
  };
}

export interface CatalogueStoreOptions {
  /** PostgreSQL: a listener on CATALOGUE_CHANNEL, so the searcher asks for the generation only after a write. */
  changes?: ChangeSignal;
  /** Where embeddings are shared between replicas (PostgreSQL). */
  vectorStore?: VectorStore;
}

/**
 * Opens (and migrates) the catalogue in `db`: a SQLite file, or a PostgreSQL connection whose search_path is its
 * schema. Closing the catalogue closes `db` (and `changes`).
 */
export async function openCatalogueStore(
  db: SqlDatabase,
  options: CatalogueStoreOptions = {},
): Promise<Catalogue> {
  await prepareCatalogue(db);
  const dialect = DIALECT_SQL[db.dialect];
  const state: CatalogueState = {
    db,
    dialect,
    statements: dialectStatements(dialect),
    insertChunks: CHUNK_INSERTS[db.dialect],
  };
  const { changes, vectorStore } = options;
  return {
    ...connectorMethods(db),
    ...documentMethods(state),
    ...chunkMethods(state),
    ...(changes ? { changes } : {}),
    ...(vectorStore ? { vectorStore } : {}),
    async close() {
      await Promise.all([db.close(), changes?.close()]);
    },
  };
}
