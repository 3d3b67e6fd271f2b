// Deterministic chunks: ≤ 1,200 code points, ~150 of overlap, cut at a newline, else a space, else anywhere.
import { hash } from "node:crypto";

export interface ChunkPolicy {
  maxCodePoints: number;
  overlap: number;
}

export const DEFAULT_CHUNK_POLICY: ChunkPolicy = { maxCodePoints: 1200, overlap: 150 };

export interface Chunk {
  id: string;
  index: number;
  /** Code-point offset of the chunk's first character in the document. */
  start: number;
  /** Code-unit (UTF-16) range of the chunk in the document string. */
  unitStart: number;
  unitEnd: number;
  text: string;
}

/** Characters in a chunk id. */
export const CHUNK_ID_LENGTH = 32;

let idInput = Buffer.allocUnsafeSlow(16 * 1024);

/** A chunk's id, from its document, index and text; the text as a string or as its UTF-8 bytes gives one id. */
export function chunkId(documentId: string, index: number, text: string | Uint8Array): string {
  const prefix = `${documentId}\0${index}\0`;
  if (typeof text === "string") return hash("sha256", prefix + text, "hex").slice(0, CHUNK_ID_LENGTH);
  // Bytes are hashed after the prefix in one reused buffer: no string is made or encoded for them.
  const length = Buffer.byteLength(prefix) + text.byteLength;
  if (length > idInput.length) idInput = Buffer.allocUnsafeSlow(Math.max(length, idInput.length * 2));
  idInput.set(text, idInput.write(prefix));
  return hash("sha256", idInput.subarray(0, length), "hex").slice(0, CHUNK_ID_LENGTH);
}

function isSpace(ch: string | undefined): boolean {
  return ch !== undefined && isSpaceCode(ch.charCodeAt(0));
}

function isSpaceCode(code: number): boolean {
  return (
    code === 32 ||
    (code >= 9 && code <= 13) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

export function chunkText(
  documentId: string,
  text: string,
  policy: ChunkPolicy = DEFAULT_CHUNK_POLICY,
): Chunk[] {
  const chunks: Chunk[] = [];
  forEachChunk(text, policy, (start, unitStart, unitEnd) => {
    const piece = text.slice(unitStart, unitEnd);
    const index = chunks.length;
    chunks.push({ id: chunkId(documentId, index, piece), index, start, unitStart, unitEnd, text: piece });
  });
  return chunks;
}

/** chunkText's ranges alone: chunk i is [bounds[2i], bounds[2i+1]) in code units. */
export function chunkBounds(text: string, policy: ChunkPolicy = DEFAULT_CHUNK_POLICY): Int32Array {
  const bounds: number[] = [];
  forEachChunk(text, policy, (_start, unitStart, unitEnd) => bounds.push(unitStart, unitEnd));
  return Int32Array.from(bounds);
}

/** Visits each chunk's code-point start and code-unit range, in order. */
function forEachChunk(
  text: string,
  policy: ChunkPolicy,
  visit: (start: number, unitStart: number, unitEnd: number) => void,
): void {
  // Code points: the string itself when it has no surrogate pairs (the common case), else split.
  const astral = /[\uD800-\uDFFF]/.test(text);
  const points: ArrayLike<string> = astral ? Array.from(text) : text;
  const unitOffset = astral ? prefixUnits(points as string[]) : undefined;
  const units = (point: number) => (unitOffset ? (unitOffset[point] as number) : point);
  const { maxCodePoints: max, overlap } = policy;
  const length = points.length;
  let start = 0;
  while (start < length) {
    let end = Math.min(length, start + max);
    if (end < length) end = astral ? cutPoint(points, start, end) : cutPointUnits(text, start, end);
    // Whitespace-only pieces are kept too: the catalogue rebuilds the exact text from the chunks.
    visit(start, units(start), units(end));
    if (end >= length) break;
    // Step back by the overlap, then forward to a word start so the next chunk does not begin mid-word.
    let next = Math.max(end - overlap, start + 1);
    if (astral) while (next < end && next > start + 1 && !isSpace(points[next - 1])) next += 1;
    else while (next < end && next > start + 1 && !isSpaceCode(text.charCodeAt(next - 1))) next += 1;
    start = next;
  }
}

/** The best end in (start, end]: after the last newline in the second half, else after the last whitespace. */
function cutPoint(points: ArrayLike<string>, start: number, end: number): number {
  const floor = start + Math.floor((end - start) / 2);
  for (let i = end; i > floor; i--) if (points[i - 1] === "\n") return i;
  for (let i = end; i > floor; i--) if (isSpace(points[i - 1])) return i;
  return end;
}

/** cutPoint over a text without surrogates, where code points are code units. */
function cutPointUnits(text: string, start: number, end: number): number {
  const floor = start + Math.floor((end - start) / 2);
  // The last newline before end, found natively; it counts when past the floor.
  const newline = text.lastIndexOf("\n", end - 1);
  if (newline >= floor) return newline + 1;
  for (let i = end; i > floor; i--) if (isSpaceCode(text.charCodeAt(i - 1))) return i;
  return end;
}

function prefixUnits(points: readonly string[]): Int32Array {
  const offsets = new Int32Array(points.length + 1);
  for (let i = 0; i < points.length; i++)
    offsets[i + 1] = (offsets[i] as number) + (points[i] as string).length;
  return offsets;
}
