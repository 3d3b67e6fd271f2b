// Stored vectors and the exact search over them: int8 with one scale per vector (a quarter of float32's bytes;
// value ≈ q × scale) or float32, one packed matrix per index, searched by vector-scan.ts.
import { type PackedRows, type PrefixScan, type RowFilter, type ScoredRow, topRows } from "./vector-scan.js";
import { wasmFloatMatrix, wasmInt8Matrix } from "./vector-wasm.js";

export type VectorFormat = "int8" | "float32";

export interface Int8Vector {
  scale: number;
  values: Int8Array;
}

/** A vector as stored: int8 with its scale, or float32 as is. */
export type StoredVector = Int8Vector | Float32Array;

export function isInt8Vector(vector: StoredVector): vector is Int8Vector {
  return !(vector instanceof Float32Array);
}

/** Symmetric per-vector quantisation: the largest |component| maps to ±127. */
export function quantize(vector: Float32Array): Int8Vector {
  let max = 0;
  for (const value of vector) max = Math.max(max, Math.abs(value));
  const scale = max > 0 ? max / 127 : 1;
  const values = new Int8Array(vector.length);
  for (let d = 0; d < vector.length; d++) values[d] = Math.round((vector[d] as number) / scale);
  return { scale, values };
}

/** `vector` in `format`, or undefined when only re-embedding can give it (int8 cannot become float32 again). */
export function toFormat(vector: StoredVector, format: VectorFormat): StoredVector | undefined {
  if (format === "int8") return isInt8Vector(vector) ? vector : quantize(vector);
  return isInt8Vector(vector) ? undefined : vector;
}

/** The bytes of one vector: float32 LE (dims × 4), or a float32 LE scale then dims int8 (4 + dims). */
export function encodeVector(vector: StoredVector): Buffer {
  if (!isInt8Vector(vector))
    return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const blob = Buffer.alloc(4 + vector.values.length);
  blob.writeFloatLE(vector.scale, 0);
  blob.set(new Uint8Array(vector.values.buffer, vector.values.byteOffset, vector.values.length), 4);
  return blob;
}

/** The inverse of encodeVector; the length tells the format apart (dims × 4 ≠ 4 + dims for every dims > 1). */
export function decodeVector(blob: Uint8Array, dims: number): StoredVector | undefined {
  const view = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  if (blob.length === dims * 4) {
    const vector = new Float32Array(dims);
    for (let d = 0; d < dims; d++) vector[d] = view.readFloatLE(d * 4);
    return vector;
  }
  if (blob.length === 4 + dims) {
    const values = new Int8Array(dims);
    values.set(new Int8Array(blob.buffer, blob.byteOffset + 4, dims));
    return { scale: view.readFloatLE(0), values };
  }
  return undefined;
}

/** Rows of one format packed for a scan; `search` scores every row against a float32 query (float32 rows on
 * WebAssembly SIMD, vector-wasm.ts; int8 rows and the fallback in JavaScript, vector-scan.ts). */
export interface VectorMatrix {
  readonly rows: number;
  /** The best `limit` rows, of those `filter` allows when given. */
  search(query: Float32Array, limit: number, scan?: PrefixScan, filter?: RowFilter): ScoredRow[];
}

export function packMatrix(
  vectors: readonly StoredVector[],
  dims: number,
  format: VectorFormat,
): VectorMatrix {
  const rows = vectors.length;
  let packed: PackedRows;
  if (format === "float32") {
    const wasm = wasmFloatMatrix(vectors as readonly Float32Array[], dims);
    if (wasm) return wasm;
    const values = new Float32Array(rows * dims);
    vectors.forEach((vector, row) => {
      values.set(vector as Float32Array, row * dims);
    });
    packed = { values, dims };
  } else {
    const wasm = wasmInt8Matrix(vectors as readonly Int8Vector[], dims);
    if (wasm) return wasm;
    const values = new Int8Array(rows * dims);
    const scales = new Float32Array(rows);
    vectors.forEach((vector, row) => {
      const int8 = vector as Int8Vector;
      values.set(int8.values, row * dims);
      scales[row] = int8.scale;
    });
    packed = { values, scales, dims };
  }
  return { rows, search: (query, limit, scan, filter) => topRows(packed, query, limit, scan, filter) };
}

/**
 * Where embeddings are kept between runs: a file per index in the cache folder (SQLite servers), or a table in
 * PostgreSQL that every replica loads from, so a chunk is embedded once whichever process ingested it.
 */
export interface VectorStore {
  /** The stored vectors of an index (only those of `ids` when given; a file store may return more). */
  load(name: string, dims: number, ids?: readonly string[]): Promise<Map<string, StoredVector>>;
  /** Records one sync's changes; `all` is the whole set afterwards. */
  update(
    name: string,
    dims: number,
    change: { added: Map<string, StoredVector>; dropped: string[]; all: Map<string, StoredVector> },
  ): Promise<void>;
}
