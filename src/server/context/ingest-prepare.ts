// One document's chunk plan (ranges, ids, analysed terms) and the catalogue replacement built from it.
// Planning is pure and runs on worker threads; texts are sliced back on the committing thread, not copied.

import { analyzeText, analyzeWithOffsets, joinedTermsBetween, type Language } from "../retrieval/analyzer.js";
import type { DocumentReplacement } from "./catalogue.js";
import { chunkText, DEFAULT_CHUNK_POLICY } from "./chunker.js";
import type { CanonicalDocument } from "./document.js";

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

export function toReplacement(
  doc: CanonicalDocument,
  plan: ChunkPlan,
  fingerprint: string,
  ingestedAt: string,
  bytes: number,
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
  };
}
