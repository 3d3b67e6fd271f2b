// One document's preparation: bytes → text → canonical document → fingerprint → chunk plan (ranges, ids,
// analysed terms). Pure, so it runs on worker threads; the committing thread slices chunk texts back itself.

import { hash } from "node:crypto";
import { analyzeText, analyzeWithOffsets, joinedTermsBetween, type Language } from "../retrieval/analyzer.js";
import type { DocumentReplacement } from "./catalogue.js";
import { chunkText, DEFAULT_CHUNK_POLICY } from "./chunker.js";
import { SkipError, type SkipReason } from "./connectors/safe-fs.js";
import { type CanonicalDocument, canonicalDocument } from "./document.js";
import { decodeText } from "./filter.js";

/** Bumped whenever chunking or analysis changes, so every document is re-indexed once. */
export const PIPELINE_VERSION = "p1";

export interface ChunkPlan {
  language: Language;
  chunks: { id: string; index: number; unitStart: number; unitEnd: number; terms: string }[];
}

export interface PlanInput {
  id: string;
  title: string;
  text: string;
}

export function planChunks(input: PlanInput): ChunkPlan {
  // Analyse the whole text once; each chunk takes the terms inside its range, after the title's terms
  // (the title repeated as a header acts as a title field, BM25F-style).
  const analysed = analyzeWithOffsets(input.text);
  const header = analyzeText(input.title, analysed.language).join(" ");
  const chunks = chunkText(input.id, input.text, DEFAULT_CHUNK_POLICY).map((chunk) => {
    const body = joinedTermsBetween(analysed, chunk.unitStart, chunk.unitEnd);
    return {
      id: chunk.id,
      index: chunk.index,
      unitStart: chunk.unitStart,
      unitEnd: chunk.unitEnd,
      // A chunk without terms of its own (whitespace, stopwords) stays out of the index entirely.
      terms: body && header ? `${header} ${body}` : body,
    };
  });
  return { language: analysed.language, chunks };
}

/** One file as read by the committing thread. */
export interface PrepareJob {
  source: string;
  sourceType: string;
  relPath: string;
  data: Uint8Array;
  mtimeMs: number;
  /** The catalogue's fingerprint of this document, if it has one: an equal fingerprint needs no chunking. */
  knownFingerprint?: string | undefined;
}

export type Prepared =
  | { skip: SkipReason }
  | { fingerprint: string; unchanged: true }
  | { fingerprint: string; unchanged?: undefined; doc: CanonicalDocument; plan: ChunkPlan };

export function prepareDocument(job: PrepareJob): Prepared {
  let text: string;
  try {
    text = decodeText(Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength));
  } catch (error) {
    if (error instanceof SkipError) return { skip: error.reason };
    throw error;
  }
  const doc = canonicalDocument({
    source: job.source,
    sourceType: job.sourceType,
    relPath: job.relPath,
    text,
    mtimeMs: job.mtimeMs,
  });
  const fingerprint = `${PIPELINE_VERSION}:${hash("sha256", doc.text, "hex")}`;
  if (fingerprint === job.knownFingerprint) return { fingerprint, unchanged: true };
  return { fingerprint, doc, plan: planChunks(doc) };
}

export function toReplacement(
  doc: CanonicalDocument,
  plan: ChunkPlan,
  fingerprint: string,
  ingestedAt: string,
  bytes: number,
  sourceStat?: string,
): DocumentReplacement {
  return {
    document: {
      id: doc.id,
      connector: doc.source,
      rel_path: doc.relPath,
      title: doc.title,
      language: plan.language,
      fingerprint,
      bytes,
      modified_at: doc.modifiedAt,
      ingested_at: ingestedAt,
      metadata: doc.metadata,
    },
    chunks: plan.chunks.map((chunk) => ({
      id: chunk.id,
      index: chunk.index,
      unitStart: chunk.unitStart,
      text: doc.text.slice(chunk.unitStart, chunk.unitEnd),
      terms: chunk.terms,
    })),
    sourceStat,
  };
}
