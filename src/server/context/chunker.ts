// Deterministic chunks: ≤ 1,200 code points, ~150 of overlap, cut at a newline, else a space, else anywhere.
import { createHash } from "node:crypto";

export interface ChunkPolicy {
  maxCodePoints: number;
  overlap: number;
}

export const DEFAULT_CHUNK_POLICY: ChunkPolicy = { maxCodePoints: 1200, overlap: 150 };

export interface Chunk {
  id: string;
  index: number;
  /** Offset of the chunk's first code point in the document. */
  start: number;
  text: string;
}

export function chunkId(documentId: string, index: number, text: string): string {
  return createHash("sha256").update(`${documentId}\0${index}\0${text}`).digest("hex").slice(0, 32);
}

export function chunkText(
  documentId: string,
  text: string,
  policy: ChunkPolicy = DEFAULT_CHUNK_POLICY,
): Chunk[] {
  const points = Array.from(text);
  const chunks: Chunk[] = [];
  const { maxCodePoints: max, overlap } = policy;
  let start = 0;
  while (start < points.length) {
    let end = Math.min(points.length, start + max);
    if (end < points.length) end = cutPoint(points, start, end);
    const piece = points.slice(start, end).join("");
    if (piece.trim().length > 0) {
      chunks.push({
        id: chunkId(documentId, chunks.length, piece),
        index: chunks.length,
        start,
        text: piece,
      });
    }
    if (end >= points.length) break;
    // Step back by the overlap, then forward to a word start so the next chunk does not begin mid-word.
    let next = Math.max(end - overlap, start + 1);
    while (next < end && next > start + 1 && !/\s/u.test(points[next - 1] ?? " ")) next += 1;
    start = next;
  }
  return chunks;
}

/** The best end in (start, end]: after the last newline in the second half, else after the last whitespace. */
function cutPoint(points: readonly string[], start: number, end: number): number {
  const floor = start + Math.floor((end - start) / 2);
  for (let i = end; i > floor; i--) if (points[i - 1] === "\n") return i;
  for (let i = end; i > floor; i--) if (/\s/u.test(points[i - 1] ?? "")) return i;
  return end;
}
