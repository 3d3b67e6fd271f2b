// One document's preparation: bytes → text → canonical document → fingerprint → chunk plan (ranges, ids,
// analysed terms). Pure, so it runs on worker threads. The text leaves as UTF-8 bytes (the file's own, most of
// the time) and the terms as UTF-8 too: the committing thread slices chunks out of them and binds the slices,
// and never makes or encodes a string for them.

import { hash } from "node:crypto";
import { analyzeText, analyzeWithOffsets, joinedTermsBetween, type Language } from "../retrieval/analyzer.js";
import { type ChunkTerms, chunkTerms } from "../retrieval/term-scanner.js";
import type { DocumentReplacement } from "./catalogue.js";
import { CHUNK_ID_LENGTH, chunkBounds, chunkId, DEFAULT_CHUNK_POLICY } from "./chunker.js";
import { type CanonicalDocument, canonicalDocument } from "./document.js";
import { decodeText } from "./filter.js";
import { findSecret } from "./secret-scan.js";
import { SkipError, type SkipReason } from "./skip.js";

/**
 * Bumped whenever chunking, analysis or filtering changes, so every document is read and re-indexed once
 * (p2: the content scan for secrets, which removes documents indexed before it).
 */
export const PIPELINE_VERSION = "p2";

/**
 * A document's chunks, column by column (a few strings and typed arrays rather than an object per chunk, so the
 * result crosses from a worker thread in a few copies): chunk i is [bounds[2i], bounds[2i+1]) in code units of
 * the text and [byteBounds[2i], byteBounds[2i+1]) in its UTF-8 bytes, its id is the i-th 32 characters of `ids`,
 * and its terms (UTF-8) end at byte termEnds[i] of `terms`.
 */
export interface ChunkPlan {
  language: Language;
  count: number;
  ids: string;
  bounds: Int32Array;
  byteBounds: Int32Array;
  terms: Uint8Array;
  termEnds: Int32Array;
}

export interface PlanInput {
  id: string;
  title: string;
  text: string;
}

/** `body` is the text's UTF-8 bytes when the caller has them (the file's own bytes, say). */
export function planChunks(
  input: PlanInput,
  scanner: "wasm" | "js" = "wasm",
  body: Uint8Array = ownedBytes(input.text),
): ChunkPlan {
  const bounds = chunkBounds(input.text, DEFAULT_CHUNK_POLICY);
  const byteBounds = byteOffsets(input.text, bounds, body.byteLength);
  // The title's terms lead each chunk's own (a header acting as a title field, BM25F-style).
  const header = (language: Language) => analyzeText(input.title, language).join(" ");
  const planned =
    (scanner === "wasm" ? chunkTerms(input.text, bounds, header) : undefined) ??
    chunkTermsInJs(input.text, bounds, header);
  return {
    language: planned.language,
    count: bounds.length / 2,
    ids: chunkIds(input.id, body, byteBounds),
    bounds,
    byteBounds,
    ...termBytes(planned),
  };
}

/** A string's UTF-8 bytes in a buffer of their own (one that can go to another thread; Buffer.from may pool). */
function ownedBytes(text: string): Uint8Array {
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return plainBytes(bytes);
}

/** The same bytes as a plain Uint8Array, what they are once they crossed to another thread. */
function plainBytes(bytes: Buffer): Uint8Array {
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A counter of the UTF-8 bytes before each code-unit position of `text`, asked in ascending order. */
function utf8Offsets(text: string): (position: number) => number {
  let unit = 0;
  let byte = 0;
  return (position) => {
    if (position > unit) {
      byte += Buffer.byteLength(text.slice(unit, position));
      unit = position;
    }
    return byte;
  };
}

/** The UTF-8 offsets of the code-unit offsets in `bounds` (pairs of start and end; starts and ends each increasing). */
function byteOffsets(text: string, bounds: Int32Array, byteLength: number): Int32Array {
  // As many bytes as units: every unit is ASCII, one byte each.
  if (byteLength === text.length) return bounds.slice();
  const offsets = new Int32Array(bounds.length);
  const byteAt = utf8Offsets(text);
  // Starts and ends merged in ascending order.
  for (let start = 0, end = 1; end < bounds.length; ) {
    const next = start < bounds.length && (bounds[start] as number) <= (bounds[end] as number) ? start : end;
    offsets[next] = byteAt(bounds[next] as number);
    if (next === start) start += 2;
    else end += 2;
  }
  return offsets;
}

/** chunkId of each chunk, hashed from the body's bytes. */
function chunkIds(documentId: string, body: Uint8Array, byteBounds: Int32Array): string {
  const ids: string[] = [];
  for (let index = 0; index < byteBounds.length / 2; index++)
    ids.push(chunkId(documentId, index, body.subarray(byteBounds[index * 2], byteBounds[index * 2 + 1])));
  return ids.join("");
}

/** Chunk terms as UTF-8 bytes, each chunk's end in bytes. */
function termBytes({ terms, termEnds }: ChunkTerms): { terms: Uint8Array; termEnds: Int32Array } {
  const bytes = ownedBytes(terms);
  // Terms are ASCII but for a few letters (ß, ø, Greek): then their byte offsets are their unit offsets.
  return {
    terms: bytes,
    termEnds: bytes.byteLength === terms.length ? termEnds : termEnds.map(utf8Offsets(terms)),
  };
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

/** A canonical document as it leaves preparation: its text as UTF-8 bytes (`body`), not as a string. */
export type PreparedDocument = Omit<CanonicalDocument, "text">;

export type Prepared =
  | { skip: SkipReason }
  | { fingerprint: string; unchanged: true }
  | { fingerprint: string; unchanged?: undefined; doc: PreparedDocument; body: Uint8Array; plan: ChunkPlan };

export function prepareDocument(job: PrepareJob): Prepared {
  const data = Buffer.from(job.data.buffer, job.data.byteOffset, job.data.byteLength);
  let text: string;
  try {
    text = decodeText(data);
  } catch (error) {
    if (error instanceof SkipError) return { skip: error.reason };
    throw error;
  }
  // Before the fingerprint check, so a document indexed before it held a secret is removed when it is read.
  const secret = findSecret(data);
  if (secret) return { skip: `sensitive content: ${secret}` };
  const { text: canonical, ...doc } = canonicalDocument({
    source: job.source,
    sourceType: job.sourceType,
    relPath: job.relPath,
    text,
    mtimeMs: job.mtimeMs,
  });
  // The file's own bytes past a byte order mark (which decoding drops), when canonical already (no carriage
  // return, in NFC): nothing is encoded again.
  const bom = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  const body = canonical === text ? plainBytes(data.subarray(bom)) : ownedBytes(canonical);
  const fingerprint = `${PIPELINE_VERSION}:${hash("sha256", body, "hex")}`;
  if (fingerprint === job.knownFingerprint) return { fingerprint, unchanged: true };
  return {
    fingerprint,
    doc,
    body,
    plan: planChunks({ id: doc.id, title: doc.title, text: canonical }, "wasm", body),
  };
}

/** The buffers of a prepared document that can move to another thread instead of being copied. */
export function transferables(prepared: Prepared): ArrayBuffer[] {
  if (!("plan" in prepared)) return [];
  return [prepared.body.buffer as ArrayBuffer, prepared.plan.terms.buffer as ArrayBuffer];
}

export function toReplacement(
  prepared: Extract<Prepared, { plan: ChunkPlan }>,
  ingestedAt: string,
  bytes: number,
  sourceStat?: string,
): DocumentReplacement {
  const { doc, body, plan, fingerprint } = prepared;
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
      text: body.subarray(plan.byteBounds[index * 2], plan.byteBounds[index * 2 + 1]),
      terms: plan.terms.subarray(index > 0 ? plan.termEnds[index - 1] : 0, plan.termEnds[index]),
    })),
    sourceStat,
  };
}
