// Ingestion: connector files → filter → canonical documents → chunks + terms → catalogue, then reconcile.
import { createHash } from "node:crypto";
import type { Catalogue, DocumentReplacement } from "./catalogue.js";
import { chunkText, DEFAULT_CHUNK_POLICY } from "./chunker.js";
import { type Connector, isSkipped, SkipError, type SkipReason } from "./connectors/index.js";
import { canonicalDocument } from "./document.js";
import { decodeText, MAX_DOCUMENT_BYTES } from "./filter.js";
import { analyzeText, documentLanguage } from "./text/analyzer.js";

/** Bumped whenever chunking or analysis changes, so every document is re-indexed once. */
export const PIPELINE_VERSION = "p1";

export interface IngestQuotas {
  documents: number;
  bytes: number;
  chunks: number;
}

export const DEFAULT_INGEST_QUOTAS: IngestQuotas = {
  documents: 200_000,
  bytes: 4 * 1024 ** 3,
  chunks: 2_000_000,
};

export interface IngestProgress {
  connector: string;
  files: number;
  bytes: number;
  relPath: string;
}

export interface IngestSummary {
  connector: string;
  added: number;
  updated: number;
  unchanged: number;
  removed: number;
  skipped: number;
  skipped_by_reason: Partial<Record<SkipReason, number>>;
  /** A bounded sample of skipped paths, for the operator. */
  skipped_examples: { path: string; reason: SkipReason }[];
  bytes: number;
  chunks: number;
  duration_ms: number;
  /** False when the enumeration failed part-way; then nothing was removed. */
  complete: boolean;
  error?: string;
}

export interface IngestOptions {
  catalogue: Catalogue;
  quotas?: IngestQuotas;
  onProgress?: (progress: IngestProgress) => void;
  now?: () => Date;
  /** Documents per catalogue transaction. */
  batchSize?: number;
}

/** Terms of a chunk: the document title once more as a header (a title field, BM25F-style), then the text. */
export function chunkTerms(
  title: string,
  text: string,
  language: ReturnType<typeof documentLanguage>,
): string {
  return [...analyzeText(title, language), ...analyzeText(text, language)].join(" ");
}

export function prepareDocument(
  doc: ReturnType<typeof canonicalDocument>,
  fingerprint: string,
  ingestedAt: string,
  bytes: number,
): DocumentReplacement {
  const language = documentLanguage(doc.text);
  const chunks = chunkText(doc.id, doc.text, DEFAULT_CHUNK_POLICY).map((chunk) => ({
    ...chunk,
    terms: chunkTerms(doc.title, chunk.text, language),
  }));
  return {
    document: {
      id: doc.id,
      connector: doc.source,
      rel_path: doc.relPath,
      title: doc.title,
      language,
      fingerprint,
      bytes,
      modified_at: doc.modifiedAt,
      ingested_at: ingestedAt,
      metadata: doc.metadata,
    },
    body: doc.text,
    chunks,
  };
}

/** Ingests one connector; the running totals in `used` are shared across connectors of one run (quotas). */
export async function ingestConnector(
  connector: Connector,
  options: IngestOptions,
  used: IngestQuotas = { documents: 0, bytes: 0, chunks: 0 },
): Promise<IngestSummary> {
  const started = performance.now();
  const now = options.now ?? (() => new Date());
  const quotas = options.quotas ?? DEFAULT_INGEST_QUOTAS;
  const batchSize = options.batchSize ?? 64;
  const summary: IngestSummary = {
    connector: connector.name,
    added: 0,
    updated: 0,
    unchanged: 0,
    removed: 0,
    skipped: 0,
    skipped_by_reason: {},
    skipped_examples: [],
    bytes: 0,
    chunks: 0,
    duration_ms: 0,
    complete: false,
  };
  const skip = (relPath: string, reason: SkipReason) => {
    summary.skipped += 1;
    summary.skipped_by_reason[reason] = (summary.skipped_by_reason[reason] ?? 0) + 1;
    if (summary.skipped_examples.length < 50) summary.skipped_examples.push({ path: relPath, reason });
  };
  const known = await options.catalogue.documentFingerprints(connector.name);
  const seen = new Set<string>();
  let batch: DocumentReplacement[] = [];
  let batchBytes = 0;
  const flush = async () => {
    await options.catalogue.replaceDocuments(batch);
    batch = [];
    batchBytes = 0;
  };
  let files = 0;

  try {
    for await (const entry of connector.discover()) {
      if (isSkipped(entry)) {
        skip(entry.relPath, entry.skip);
        continue;
      }
      files += 1;
      let text: string;
      let mtimeMs: number;
      let size: number;
      try {
        const read = await entry.read(MAX_DOCUMENT_BYTES);
        mtimeMs = read.mtimeMs;
        size = read.data.length;
        text = decodeText(read.data);
      } catch (error) {
        if (error instanceof SkipError) {
          skip(entry.relPath, error.reason);
          continue;
        }
        throw error;
      }
      options.onProgress?.({
        connector: connector.name,
        files,
        bytes: summary.bytes + size,
        relPath: entry.relPath,
      });
      const doc = canonicalDocument({
        source: connector.name,
        sourceType: connector.type,
        relPath: entry.relPath,
        text,
        mtimeMs,
      });
      const fingerprint = `${PIPELINE_VERSION}:${createHash("sha256").update(doc.text).digest("hex")}`;
      if (used.documents + 1 > quotas.documents || used.bytes + size > quotas.bytes) {
        // Over quota: keep whatever version the catalogue has rather than remove it.
        if (known.has(doc.id)) seen.add(doc.id);
        skip(entry.relPath, used.documents + 1 > quotas.documents ? "quota: documents" : "quota: bytes");
        continue;
      }
      seen.add(doc.id);
      if (known.get(doc.id) === fingerprint) {
        summary.unchanged += 1;
        used.documents += 1;
        used.bytes += size;
        summary.bytes += size;
        continue;
      }
      const replacement = prepareDocument(doc, fingerprint, now().toISOString(), size);
      if (used.chunks + replacement.chunks.length > quotas.chunks) {
        skip(entry.relPath, "quota: chunks");
        continue;
      }
      used.documents += 1;
      used.bytes += size;
      used.chunks += replacement.chunks.length;
      summary.bytes += size;
      summary.chunks += replacement.chunks.length;
      if (known.has(doc.id)) summary.updated += 1;
      else summary.added += 1;
      batch.push(replacement);
      batchBytes += size;
      if (batch.length >= batchSize || batchBytes >= 8 * 1024 * 1024) await flush();
    }
    await flush();
    summary.complete = true;
  } catch (error) {
    await flush();
    summary.error = error instanceof Error ? error.message : String(error);
  }
  if (summary.complete) {
    summary.removed = await options.catalogue.removeDocuments(
      [...known.keys()].filter((id) => !seen.has(id)),
    );
    await options.catalogue.markIngested(connector.name, now().toISOString());
  }
  summary.duration_ms = Math.round(performance.now() - started);
  return summary;
}
