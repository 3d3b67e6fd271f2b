// Ingestion: connector files → filter → canonical documents → chunks + terms → catalogue, then reconcile.
import { createHash } from "node:crypto";
import type { Catalogue, DocumentReplacement } from "./catalogue.js";
import { type Connector, isSkipped, SkipError, type SkipReason } from "./connectors/index.js";
import { type CanonicalDocument, canonicalDocument } from "./document.js";
import { decodeText, MAX_DOCUMENT_BYTES } from "./filter.js";
import { type ChunkPlan, toReplacement } from "./ingest-prepare.js";
import { createInlinePreparer, type DocumentPreparer } from "./prepare-pool.js";

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
  /** Where chunking and analysis run (default: inline on this thread). */
  preparer?: DocumentPreparer;
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
  const preparer = options.preparer ?? createInlinePreparer();
  // Documents being prepared, oldest first; committed in this order so runs are deterministic. Deep enough
  // that workers keep busy while this thread commits a batch, bounded in count and bytes.
  let inflightBytes = 0;
  const inflight: {
    doc: CanonicalDocument;
    fingerprint: string;
    ingestedAt: string;
    known: boolean;
    size: number;
    plan: Promise<ChunkPlan>;
  }[] = [];
  const settleOldest = async () => {
    const oldest = inflight.shift();
    if (!oldest) return;
    inflightBytes -= oldest.size;
    const replacement = toReplacement(
      oldest.doc,
      await oldest.plan,
      oldest.fingerprint,
      oldest.ingestedAt,
      oldest.size,
    );
    if (used.chunks + replacement.chunks.length > quotas.chunks) {
      skip(replacement.document.rel_path, "quota: chunks");
      if (oldest.known) seen.add(oldest.doc.id);
      return;
    }
    used.chunks += replacement.chunks.length;
    summary.chunks += replacement.chunks.length;
    if (oldest.known) summary.updated += 1;
    else summary.added += 1;
    batch.push(replacement);
    batchBytes += oldest.size;
    if (batch.length >= batchSize || batchBytes >= 8 * 1024 * 1024) await flush();
  };

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
      used.documents += 1;
      used.bytes += size;
      summary.bytes += size;
      inflight.push({
        doc,
        fingerprint,
        ingestedAt: now().toISOString(),
        known: known.has(doc.id),
        size,
        plan: preparer.plan({ id: doc.id, title: doc.title, text: doc.text }),
      });
      inflightBytes += size;
      while (inflight.length >= 128 || inflightBytes > 64 * 1024 * 1024) await settleOldest();
    }
    while (inflight.length > 0) await settleOldest();
    await flush();
    summary.complete = true;
  } catch (error) {
    // Whatever was fully prepared is still committed; the rest waits for the next run.
    await Promise.allSettled(inflight.map((entry) => entry.plan));
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
  await options.catalogue.recordIngestSummary(connector.name, {
    at: now().toISOString(),
    added: summary.added,
    updated: summary.updated,
    unchanged: summary.unchanged,
    removed: summary.removed,
    skipped: summary.skipped,
    skipped_by_reason: summary.skipped_by_reason as Record<string, number>,
    skipped_examples: summary.skipped_examples,
    complete: summary.complete,
    ...(summary.error !== undefined ? { error: summary.error } : {}),
  });
  return summary;
}
