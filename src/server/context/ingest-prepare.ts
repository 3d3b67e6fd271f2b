// One document's preparation: bytes → text → canonical document → fingerprint → chunk plan (ranges, ids,
// analysed terms). Pure, so it runs on worker threads; the committing thread slices chunk texts back itself.

import { hash } from "node:crypto";
import { analyzeText, analyzeWithOffsets, joinedTermsBetween, type Language } from "../retrieval/analyzer.js";
import { type ChunkTerms, chunkTerms } from "../retrieval/term-scanner.js";
import type { DocumentReplacement } from "./catalogue.js";
import { chunkText, DEFAULT_CHUNK_POLICY } from "./chunker.js";
import { SkipError, type SkipReason } from "./connectors/safe-fs.js";
import { type CanonicalDocument, canonicalDocument } from "./document.js";
import { decodeText } from "./filter.js";

/** Bumped whenever chunking or analysis changes, so every document is re-indexed once. */
export const PIPELINE_VERSION = "p1";

/**
 * A document's chunks, column by column (a few strings and typed arrays rather than an object per chunk, so the
 * result crosses from a worker thread in a few copies): chunk i is [bounds[2i], bounds[2i+1]) in code units, its
 * id is the i-th 32 characters of `ids`, its terms end at termEnds[i] in `terms`.
 */
export interface ChunkPlan {
  language: Language;
  count: number;
  ids: string;
  bounds: Int32Array;
  terms: string;
  termEnds: Int32Array;
}

const CHUNK_ID_LENGTH = 32;

export interface PlanInput {
  id: string;
  title: string;
  text: string;
}

export function planChunks(input: PlanInput, scanner: "wasm" | "js" = "wasm"): ChunkPlan {
  const chunks = chunkText(input.id, input.text, DEFAULT_CHUNK_POLICY);
  const bounds = new Int32Array(chunks.length * 2);
  const ids: string[] = [];
  for (const chunk of chunks) {
    if (chunk.id.length !== CHUNK_ID_LENGTH) throw new Error("chunk ids are 32 characters");
    ids.push(chunk.id);
    bounds[chunk.index * 2] = chunk.unitStart;
    bounds[chunk.index * 2 + 1] = chunk.unitEnd;
  }
  // The title's terms lead each chunk's own (a header acting as a title field, BM25F-style).
  const header = (language: Language) => analyzeText(input.title, language).join(" ");
  const planned =
    (scanner === "wasm" ? chunkTerms(input.text, bounds, header) : undefined) ??
    chunkTermsInJs(input.text, bounds, header);
  return { count: chunks.length, ids: ids.join(""), bounds, ...planned };
}

/** chunkTerms's reference: the whole text analysed once, each chunk taking the terms inside its range. */
function chunkTermsInJs(
  text: string,
  bounds: Int32Array,
  header: (language: Language) => string,
): ChunkTerms {
  const analysed = analyzeWithOffsets(text);
  const headerTerms = header(analysed.language);
  const count = bounds.length / 2;
  const termEnds = new Int32Array(count);
  const terms: string[] = [];
  let termsLength = 0;
  for (let index = 0; index < count; index++) {
    const body = joinedTermsBetween(analysed, bounds[index * 2] as number, bounds[index * 2 + 1] as number);
    // A chunk without terms of its own (whitespace, stopwords) stays out of the index entirely.
    const own = body && headerTerms ? `${headerTerms} ${body}` : body;
    terms.push(own);
    termsLength += own.length;
    termEnds[index] = termsLength;
  }
  return { language: analysed.language, terms: terms.join(""), termEnds };
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
    chunks: Array.from({ length: plan.count }, (_, index) => ({
      id: plan.ids.slice(index * CHUNK_ID_LENGTH, (index + 1) * CHUNK_ID_LENGTH),
      index,
      unitStart: plan.bounds[index * 2] as number,
      text: doc.text.slice(plan.bounds[index * 2], plan.bounds[index * 2 + 1]),
      terms: plan.terms.slice(index > 0 ? plan.termEnds[index - 1] : 0, plan.termEnds[index]),
    })),
    sourceStat,
  };
}
