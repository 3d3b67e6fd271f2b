// Ingestion: connector files → filter → canonical documents → chunks + terms → catalogue, then reconcile.
// This thread walks, stats and reads files and is the one writer; decoding, hashing, chunking and analysis run
// on the preparer's worker threads. A file whose stat matches the one recorded with its document is not read.
import type { Catalogue, DocumentReplacement } from "./catalogue.js";
import { type Connector, isSkipped, SkipError, type SkipReason } from "./connectors/index.js";
import { documentId } from "./document.js";
import { MAX_DOCUMENT_BYTES } from "./filter.js";
import { PIPELINE_VERSION, type Prepared, toReplacement } from "./ingest-prepare.js";
import { createInlinePreparer, type DocumentPreparer } from "./prepare-pool.js";

export { PIPELINE_VERSION };

/** Entries read ahead of the oldest one not yet committed (see `inflight`). */
const MAX_INFLIGHT = 512;

/** An entry of one ingest run waiting its turn to be decided and committed. */
type Pending =
  | { kind: "skip"; relPath: string; reason: SkipReason }
  | { kind: "stat"; id: string; relPath: string; size: number }
  | {
      kind: "read";
      id: string;
      relPath: string;
      size: number;
      sourceStat: string | undefined;
      ingestedAt: string;
      prepared: Promise<Prepared>;
    };

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
  const known = await options.catalogue.documentStates(connector.name);
  const current = `${PIPELINE_VERSION}:`;
  const seen = new Set<string>();
  let batch: DocumentReplacement[] = [];
  let batchBytes = 0;
  let touched: { id: string; fingerprint: string; sourceStat: string }[] = [];
  const flush = async () => {
    await options.catalogue.replaceDocuments(batch);
    batch = [];
    batchBytes = 0;
    await options.catalogue.recordSourceStats(touched);
    touched = [];
  };
  let files = 0;
  const preparer = options.preparer ?? createInlinePreparer();
  // Every entry in discovery order: files read and being prepared (on worker threads), files whose stat says
  // unchanged, and skips. Settled oldest first, so a run decides exactly as one thread doing each file in turn
  // would. Deep enough that workers keep busy while this thread commits a batch or the catalogue checkpoints its
  // log, bounded in count and bytes.
  let inflightBytes = 0;
  const inflight: Pending[] = [];
  const settleOldest = async () => {
    const oldest = inflight.shift();
    if (!oldest) return;
    if (oldest.kind === "skip") {
      skip(oldest.relPath, oldest.reason);
      return;
    }
    const prepared = oldest.kind === "read" ? await oldest.prepared : undefined;
    if (oldest.kind === "read") inflightBytes -= oldest.size;
    if (prepared && "skip" in prepared) {
      skip(oldest.relPath, prepared.skip);
      return;
    }
    const { id, relPath, size } = oldest;
    if (used.documents + 1 > quotas.documents || used.bytes + size > quotas.bytes) {
      // Over quota: keep whatever version the catalogue has rather than remove it.
      if (known.has(id)) seen.add(id);
      skip(relPath, used.documents + 1 > quotas.documents ? "quota: documents" : "quota: bytes");
      return;
    }
    seen.add(id);
    used.documents += 1;
    used.bytes += size;
    summary.bytes += size;
    if (!prepared || prepared.unchanged) {
      summary.unchanged += 1;
      // Same content under a new stat (touched, copied back): remember the stat, to skip the read next time.
      const sourceStat = oldest.kind === "read" ? oldest.sourceStat : undefined;
      if (prepared && sourceStat && sourceStat !== known.get(id)?.sourceStat)
        touched.push({ id, fingerprint: prepared.fingerprint, sourceStat });
      return;
    }
    const read = oldest as Extract<Pending, { kind: "read" }>;
    const replacement = toReplacement(prepared, read.ingestedAt, size, read.sourceStat);
    if (used.chunks + replacement.chunks.length > quotas.chunks) {
      skip(relPath, "quota: chunks");
      return;
    }
    used.chunks += replacement.chunks.length;
    summary.chunks += replacement.chunks.length;
    if (known.has(id)) summary.updated += 1;
    else summary.added += 1;
    batch.push(replacement);
    batchBytes += size;
    if (batch.length >= batchSize || batchBytes >= 8 * 1024 * 1024) await flush();
  };
  const drain = async () => {
    while (inflight.length >= MAX_INFLIGHT || inflightBytes > 64 * 1024 * 1024) await settleOldest();
  };

  try {
    for await (const entry of connector.discover()) {
      if (isSkipped(entry)) {
        inflight.push({ kind: "skip", relPath: entry.relPath, reason: entry.skip });
        await drain();
        continue;
      }
      files += 1;
      const id = documentId(connector.name, entry.relPath);
      const prior = known.get(id);
      // A file whose stat is the one recorded with the current pipeline's version of it is not read again.
      if (prior?.sourceStat && prior.fingerprint.startsWith(current) && entry.stat) {
        const stat = await entry.stat(MAX_DOCUMENT_BYTES);
        if (stat && stat.sourceStat === prior.sourceStat) {
          options.onProgress?.({
            connector: connector.name,
            files,
            bytes: summary.bytes + stat.size,
            relPath: entry.relPath,
          });
          inflight.push({ kind: "stat", id, relPath: entry.relPath, size: stat.size });
          await drain();
          continue;
        }
      }
      let read: Awaited<ReturnType<typeof entry.read>>;
      try {
        read = await entry.read(MAX_DOCUMENT_BYTES);
      } catch (error) {
        if (error instanceof SkipError) {
          inflight.push({ kind: "skip", relPath: entry.relPath, reason: error.reason });
          await drain();
          continue;
        }
        throw error;
      }
      const size = read.data.length;
      options.onProgress?.({
        connector: connector.name,
        files,
        bytes: summary.bytes + size,
        relPath: entry.relPath,
      });
      const prepared = preparer.prepare({
        source: connector.name,
        sourceType: connector.type,
        relPath: entry.relPath,
        data: read.data,
        mtimeMs: read.mtimeMs,
        knownFingerprint: prior?.fingerprint,
      });
      // Awaited in turn; until then a failure must not count as unhandled (that would end the process).
      prepared.catch(() => {});
      inflight.push({
        kind: "read",
        id,
        relPath: entry.relPath,
        size,
        sourceStat: read.sourceStat,
        ingestedAt: now().toISOString(),
        prepared,
      });
      inflightBytes += size;
      await drain();
    }
    while (inflight.length > 0) await settleOldest();
    await flush();
    summary.complete = true;
  } catch (error) {
    // Whatever was fully prepared is still committed; the rest waits for the next run.
    await Promise.allSettled(inflight.map((entry) => (entry.kind === "read" ? entry.prepared : undefined)));
    for (const entry of inflight) if (entry.kind === "skip") skip(entry.relPath, entry.reason);
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
