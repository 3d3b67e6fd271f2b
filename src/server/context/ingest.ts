// Ingestion: connector files → filter → canonical documents → chunks + terms → catalogue, then reconcile.
// This thread walks, stats and reads files and is the one writer; decoding, hashing, chunking and analysis run
// on the preparer's worker threads. A file whose stat matches the one recorded with its document is not read.
import type { Catalogue, DocumentReplacement } from "./catalogue.js";
import {
  type Connector,
  type DiscoveredFile,
  isSkipped,
  SkipError,
  type SkipReason,
} from "./connectors/index.js";
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

/** Documents found unchanged by content whose stat is new (touched, copied back): their stats to record. */
type Touched = { id: string; fingerprint: string; sourceStat: string };

/** One connector's ingest run: its settings, what the catalogue knew, and what it has decided so far. */
interface IngestRun {
  connector: Connector;
  catalogue: Catalogue;
  quotas: IngestQuotas;
  /** Running totals shared across the connectors of one run (quotas). */
  used: IngestQuotas;
  batchSize: number;
  now: () => Date;
  onProgress: ((progress: IngestProgress) => void) | undefined;
  preparer: DocumentPreparer;
  summary: IngestSummary;
  known: Map<string, { fingerprint: string; sourceStat: string | null }>;
  seen: Set<string>;
  batch: DocumentReplacement[];
  batchBytes: number;
  touched: Touched[];
  files: number;
  /**
   * Every entry in discovery order: files read and being prepared (on worker threads), files whose stat says
   * unchanged, and skips. Settled oldest first, so a run decides exactly as one thread doing each file in turn
   * would. Deep enough that workers keep busy while this thread commits a batch or the catalogue checkpoints its
   * log, bounded in count and bytes.
   */
  inflight: Pending[];
  inflightBytes: number;
}

function emptySummary(connector: string): IngestSummary {
  return {
    connector,
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
}

function recordSkip(run: IngestRun, relPath: string, reason: SkipReason): void {
  const { summary } = run;
  summary.skipped += 1;
  summary.skipped_by_reason[reason] = (summary.skipped_by_reason[reason] ?? 0) + 1;
  if (summary.skipped_examples.length < 50) summary.skipped_examples.push({ path: relPath, reason });
}

/** Commits the batch of whole documents, then the stats of touched unchanged ones. */
async function flush(run: IngestRun): Promise<void> {
  await run.catalogue.replaceDocuments(run.batch);
  run.batch = [];
  run.batchBytes = 0;
  await run.catalogue.recordSourceStats(run.touched);
  run.touched = [];
}

/** The quota a document of `size` bytes would exceed, if any. */
function overQuota(run: IngestRun, size: number): SkipReason | undefined {
  if (run.used.documents + 1 > run.quotas.documents) return "quota: documents";
  if (run.used.bytes + size > run.quotas.bytes) return "quota: bytes";
  return undefined;
}

/** Same content: counted unchanged, and a new stat remembered, to skip the read next time. */
function keepUnchanged(run: IngestRun, entry: Exclude<Pending, { kind: "skip" }>, prepared?: Prepared): void {
  run.summary.unchanged += 1;
  const sourceStat = entry.kind === "read" ? entry.sourceStat : undefined;
  if (prepared && !("skip" in prepared) && sourceStat && sourceStat !== run.known.get(entry.id)?.sourceStat)
    run.touched.push({ id: entry.id, fingerprint: prepared.fingerprint, sourceStat });
}

/** A changed or new document joins the batch (unless over the chunk quota); a full batch is committed. */
async function addChanged(
  run: IngestRun,
  read: Extract<Pending, { kind: "read" }>,
  prepared: Extract<Prepared, { plan: unknown }>,
): Promise<void> {
  const replacement = toReplacement(prepared, read.ingestedAt, read.size, read.sourceStat);
  if (run.used.chunks + replacement.chunks.length > run.quotas.chunks) {
    recordSkip(run, read.relPath, "quota: chunks");
    return;
  }
  run.used.chunks += replacement.chunks.length;
  run.summary.chunks += replacement.chunks.length;
  if (run.known.has(read.id)) run.summary.updated += 1;
  else run.summary.added += 1;
  run.batch.push(replacement);
  run.batchBytes += read.size;
  if (run.batch.length >= run.batchSize || run.batchBytes >= 8 * 1024 * 1024) await flush(run);
}

/** Decides the oldest entry in flight, waiting for its preparation. */
async function settleOldest(run: IngestRun): Promise<void> {
  const oldest = run.inflight.shift();
  if (!oldest) return;
  if (oldest.kind === "skip") return recordSkip(run, oldest.relPath, oldest.reason);
  const prepared = oldest.kind === "read" ? await oldest.prepared : undefined;
  if (oldest.kind === "read") run.inflightBytes -= oldest.size;
  if (prepared && "skip" in prepared) return recordSkip(run, oldest.relPath, prepared.skip);
  const { id, relPath, size } = oldest;
  const over = overQuota(run, size);
  if (over) {
    // Over quota: keep whatever version the catalogue has rather than remove it.
    if (run.known.has(id)) run.seen.add(id);
    return recordSkip(run, relPath, over);
  }
  run.seen.add(id);
  run.used.documents += 1;
  run.used.bytes += size;
  run.summary.bytes += size;
  if (!prepared || prepared.unchanged || oldest.kind !== "read") return keepUnchanged(run, oldest, prepared);
  await addChanged(run, oldest, prepared as Extract<Prepared, { plan: unknown }>);
}

/** Queues an entry, settling the oldest ones while too many entries or bytes are in flight. */
async function enqueue(run: IngestRun, entry: Pending): Promise<void> {
  run.inflight.push(entry);
  if (entry.kind === "read") run.inflightBytes += entry.size;
  while (run.inflight.length >= MAX_INFLIGHT || run.inflightBytes > 64 * 1024 * 1024) await settleOldest(run);
}

function reportProgress(run: IngestRun, relPath: string, size: number): void {
  run.onProgress?.({
    connector: run.connector.name,
    files: run.files,
    bytes: run.summary.bytes + size,
    relPath,
  });
}

/**
 * A file whose stat is the one recorded with the current pipeline's version of it is not read again: queued as
 * unchanged. False when it must be read.
 */
async function queueIfStatUnchanged(run: IngestRun, entry: DiscoveredFile, id: string): Promise<boolean> {
  const prior = run.known.get(id);
  if (!prior?.sourceStat || !prior.fingerprint.startsWith(`${PIPELINE_VERSION}:`) || !entry.stat)
    return false;
  const stat = await entry.stat(MAX_DOCUMENT_BYTES);
  if (!stat || stat.sourceStat !== prior.sourceStat) return false;
  reportProgress(run, entry.relPath, stat.size);
  await enqueue(run, { kind: "stat", id, relPath: entry.relPath, size: stat.size });
  return true;
}

/** Reads a file and hands it to the preparer; a file the connector refuses to read is queued as a skip. */
async function queueRead(run: IngestRun, entry: DiscoveredFile, id: string): Promise<void> {
  let read: Awaited<ReturnType<typeof entry.read>>;
  try {
    read = await entry.read(MAX_DOCUMENT_BYTES);
  } catch (error) {
    if (!(error instanceof SkipError)) throw error;
    return enqueue(run, { kind: "skip", relPath: entry.relPath, reason: error.reason });
  }
  const size = read.data.length;
  reportProgress(run, entry.relPath, size);
  const prepared = run.preparer.prepare({
    source: run.connector.name,
    sourceType: run.connector.type,
    relPath: entry.relPath,
    data: read.data,
    mtimeMs: read.mtimeMs,
    knownFingerprint: run.known.get(id)?.fingerprint,
  });
  // Awaited in turn; until then a failure must not count as unhandled (that would end the process).
  prepared.catch(() => {});
  const ingestedAt = run.now().toISOString();
  await enqueue(run, {
    kind: "read",
    id,
    relPath: entry.relPath,
    size,
    sourceStat: read.sourceStat,
    ingestedAt,
    prepared,
  });
}

/** Walks the connector and settles every entry, committing as it goes. */
async function discoverAll(run: IngestRun): Promise<void> {
  for await (const entry of run.connector.discover()) {
    if (isSkipped(entry)) {
      await enqueue(run, { kind: "skip", relPath: entry.relPath, reason: entry.skip });
      continue;
    }
    run.files += 1;
    const id = documentId(run.connector.name, entry.relPath);
    if (!(await queueIfStatUnchanged(run, entry, id))) await queueRead(run, entry, id);
  }
  while (run.inflight.length > 0) await settleOldest(run);
  await flush(run);
}

/** After a failure: whatever was fully prepared is still committed; the rest waits for the next run. */
async function commitPrepared(run: IngestRun): Promise<void> {
  await Promise.allSettled(run.inflight.map((entry) => (entry.kind === "read" ? entry.prepared : undefined)));
  for (const entry of run.inflight) if (entry.kind === "skip") recordSkip(run, entry.relPath, entry.reason);
  await flush(run);
}

/** A complete run removes what it did not see; every run records its summary (the console's "last ingest"). */
async function finish(run: IngestRun, started: number): Promise<void> {
  const { catalogue, summary, connector } = run;
  if (summary.complete) {
    summary.removed = await catalogue.removeDocuments(
      [...run.known.keys()].filter((id) => !run.seen.has(id)),
    );
    await catalogue.markIngested(connector.name, run.now().toISOString());
  }
  summary.duration_ms = Math.round(performance.now() - started);
  await catalogue.recordIngestSummary(connector.name, {
    at: run.now().toISOString(),
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
}

/** Ingests one connector; the running totals in `used` are shared across connectors of one run (quotas). */
export async function ingestConnector(
  connector: Connector,
  options: IngestOptions,
  used: IngestQuotas = { documents: 0, bytes: 0, chunks: 0 },
): Promise<IngestSummary> {
  const started = performance.now();
  const run: IngestRun = {
    connector,
    catalogue: options.catalogue,
    quotas: options.quotas ?? DEFAULT_INGEST_QUOTAS,
    used,
    batchSize: options.batchSize ?? 64,
    now: options.now ?? (() => new Date()),
    onProgress: options.onProgress,
    preparer: options.preparer ?? createInlinePreparer(),
    summary: emptySummary(connector.name),
    known: await options.catalogue.documentStates(connector.name),
    seen: new Set(),
    batch: [],
    batchBytes: 0,
    touched: [],
    files: 0,
    inflight: [],
    inflightBytes: 0,
  };
  try {
    await discoverAll(run);
    run.summary.complete = true;
  } catch (error) {
    await commitPrepared(run);
    run.summary.error = error instanceof Error ? error.message : String(error);
  }
  await finish(run, started);
  return run.summary;
}
