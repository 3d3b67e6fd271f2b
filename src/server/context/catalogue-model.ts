// The catalogue's records and contract, shared by its one implementation (catalogue-store.ts) and its users.
import type { LastIngest } from "../../protocol/console-api.js";
import type { CorpusModelStore } from "./corpus-store.js";
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
  ): Promise<{ seq: number; id: string; terms: string; document_id: string; connector: string }[]>;
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
  /** PostgreSQL: where the corpus embedder's model is kept (SQLite servers keep it in a file beside the catalogue). */
  corpusModels?: CorpusModelStore;
  /** PostgreSQL with notifications: whether the catalogue may have changed since last asked (see ChangeSignal). */
  changes?: { takeChanged(): boolean };
  /** SQLite closes at once; PostgreSQL's pool ends asynchronously. */
  close(): void | Promise<void>;
}
