// The vector scan on WebAssembly SIMD (wasm/vector-scan.ts): one module instance per packed matrix, its rows kept
// in the module's memory and scored 4 (float32) or 16 (int8) lanes at a time, the best rows chosen inside the
// module. Float32 rows: an exact scan, or the two-stage prefix scan whose first pass reads the leading axes as int8
// (a quarter of the bytes; every candidate is then re-scored on its float32 row). Int8 rows (per-row scale): the
// query as int16. The same rows as vector-scan.ts's JavaScript scan (the reference in the tests) up to rounding of
// the scores; undefined where WebAssembly cannot be instantiated, and the caller scans in JavaScript.
import type { Int8Vector } from "./vector-matrix.js";
import { maskScores, type PrefixScan, type RowFilter, type ScoredRow, withoutMasked } from "./vector-scan.js";
import { VECTOR_SCAN_WASM } from "./vector-scan-wasm.js";

// The part of the WebAssembly API used here (TypeScript's ES library, without the DOM's, does not describe it).
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
};

interface ScanExports {
  memory: { buffer: ArrayBuffer };
  reserve(bytes: number): number;
  dots(matrix: number, rows: number, stride: number, axes: number, query: number, out: number): void;
  dotsI8(
    matrix: number,
    rows: number,
    stride: number,
    axes: number,
    query: number,
    scales: number,
    queryScale: number,
    out: number,
  ): void;
  dotsOf(
    matrix: number,
    stride: number,
    axes: number,
    query: number,
    picked: number,
    count: number,
    out: number,
  ): void;
  best(
    scores: number,
    ids: number,
    count: number,
    k: number,
    scratch: number,
    outIds: number,
    outScores: number,
  ): number;
  combineRows(matrix: number, stride: number, ids: number, weights: number, count: number, out: number): void;
  bestMany(
    scores: number,
    count: number,
    k: number,
    capacity: number,
    scratch: number,
    spare: number,
    outIds: number,
    outScores: number,
  ): number;
}

export interface WasmMatrix {
  readonly rows: number;
  search(query: Float32Array, limit: number, scan?: PrefixScan, filter?: RowFilter): ScoredRow[];
}

/** Int16 query lanes stay within ±8191: 127 × 8191 × 2,048 axes fits an int32 sum. */
const QUERY_MAX = 8191;
const MAX_INT8_AXES = 2048;

let compiled: object | null | undefined;

function instantiate(): ScanExports | undefined {
  if (compiled === undefined) {
    try {
      compiled = new WebAssembly.Module(Buffer.from(VECTOR_SCAN_WASM, "base64"));
    } catch {
      compiled = null;
    }
  }
  if (!compiled) return undefined;
  try {
    const instance = new WebAssembly.Instance(compiled, {
      env: {
        abort: () => {
          throw new Error("the vector scan aborted");
        },
      },
    });
    return instance.exports as unknown as ScanExports;
  } catch {
    return undefined;
  }
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/** One instance with its memory views, a bump allocator that throws when memory cannot grow, and the selection. */
function scanSpace(scan: ScanExports, rows: number) {
  const reserve = (bytes: number) => {
    const at = scan.reserve(Math.max(4, bytes));
    if (at === 0) throw new RangeError("the vector scan could not grow its memory");
    return at;
  };
  const floats = (at: number, length: number) => new Float32Array(scan.memory.buffer, at, length);
  const scores = reserve(rows * 4);
  // Selection space, grown (never shrunk: memory only grows) to the largest k asked for.
  let capacity = 0;
  let work = { ids: 0, scores: 0, scratch: 0, picked: 0, pickedScores: 0, spare: 0, sample: 0 };
  const room = (k: number) => {
    if (k <= capacity) return work;
    capacity = Math.max(k, capacity * 2, 64);
    work = {
      ids: reserve(capacity * 4),
      scores: reserve(capacity * 4),
      scratch: reserve(capacity * 8),
      picked: reserve(capacity * 4),
      pickedScores: reserve(capacity * 4),
      // bestMany's admitted rows (up to 4 × capacity) and its heap; its sample of the scores.
      spare: reserve((3 * 4 * capacity + 2 * capacity) * 4),
      sample: work.sample || reserve(rows * 4),
    };
    return work;
  };
  const read = (count: number, at: { ids: number; scores: number }) => {
    const ids = new Int32Array(scan.memory.buffer, at.ids, count);
    const values = floats(at.scores, count);
    const out: ScoredRow[] = [];
    for (let i = 0; i < count; i++) out.push({ row: ids[i] as number, score: values[i] as number });
    return out;
  };
  /** Rows a filter excludes score -Infinity in the scores array (before a selection). */
  const mask = (filter: RowFilter | undefined) => {
    if (filter) maskScores(floats(scores, rows), filter);
  };
  /** The best k rows of the scores array, best first. */
  const top = (k: number) => {
    const space = room(k);
    return read(scan.best(scores, 0, rows, k, space.scratch, space.ids, space.scores), space);
  };
  /** The best `count` rows' ids by the scores array (about one pass), into work.picked; how many. */
  const candidates = (count: number) => {
    const space = room(count);
    const found = scan.bestMany(
      scores,
      rows,
      count,
      4 * capacity,
      space.sample,
      space.spare,
      space.picked,
      space.pickedScores,
    );
    return { found, space };
  };
  return { reserve, floats, scores, room, read, mask, top, candidates };
}

/** Int8 rows with a scale each from float32 rows' first `width` values (stride bytes a row, zero padding). */
function quantizeRows(
  vectors: readonly Float32Array[],
  width: number,
  stride: number,
  values: Int8Array,
  scales: Float32Array,
) {
  vectors.forEach((vector, row) => {
    let max = 0;
    for (let d = 0; d < width && d < vector.length; d++) max = Math.max(max, Math.abs(vector[d] as number));
    const scale = max > 0 ? max / 127 : 1;
    scales[row] = scale;
    for (let d = 0; d < width && d < vector.length; d++)
      values[row * stride + d] = Math.round((vector[d] as number) / scale);
  });
}

/** The query as int16 lanes (its first `length` values, zero beyond) and the scale that undoes it. */
function int16Query(vector: Float32Array, into: Int16Array, length: number): number {
  let max = 0;
  for (let d = 0; d < length && d < vector.length; d++) max = Math.max(max, Math.abs(vector[d] as number));
  const scale = max > 0 ? max / QUERY_MAX : 1;
  into.fill(0);
  for (let d = 0; d < length && d < vector.length; d++) into[d] = Math.round((vector[d] as number) / scale);
  return scale;
}

/** Float32 rows (each `dims` floats) in a module's memory, or undefined without WebAssembly / memory. */
export function wasmFloatMatrix(vectors: readonly Float32Array[], dims: number): WasmMatrix | undefined {
  const scan = instantiate();
  if (!scan) return undefined;
  const rows = vectors.length;
  const stride = roundUp(Math.max(1, dims), 4);
  let space: ReturnType<typeof scanSpace>;
  let matrix: number;
  let query: number;
  try {
    space = scanSpace(scan, rows);
    matrix = space.reserve(rows * stride * 4);
    query = space.reserve(stride * 4);
  } catch {
    return undefined;
  }
  const view = space.floats(matrix, rows * stride);
  vectors.forEach((vector, row) => {
    view.set(vector.subarray(0, dims), row * stride);
  });
  // The leading axes as int8 rows, built the first time a prefix scan asks for that width (a multiple of 16).
  const prefixes = new Map<number, { values: number; scales: number; query: number }>();
  const prefixBlock = (width: number) => {
    let block = prefixes.get(width);
    if (!block) {
      block = {
        values: space.reserve(rows * width),
        scales: space.reserve(rows * 4),
        query: space.reserve(width * 2),
      };
      quantizeRows(
        vectors,
        Math.min(width, dims),
        width,
        new Int8Array(scan.memory.buffer, block.values, rows * width),
        space.floats(block.scales, rows),
      );
      prefixes.set(width, block);
    }
    return block;
  };

  return {
    rows,
    search(vector, limit, prefixScan, filter) {
      const k = Math.min(Math.max(0, limit), rows);
      if (k === 0) return [];
      const q = space.floats(query, stride);
      q.fill(0);
      q.set(vector.subarray(0, dims));
      const width = prefixScan ? roundUp(prefixScan.prefix, 16) : stride;
      if (!prefixScan || rows <= prefixScan.candidates || width >= stride) {
        scan.dots(matrix, rows, stride, stride, query, space.scores);
        space.mask(filter);
        return withoutMasked(space.top(k));
      }
      const block = prefixBlock(width);
      const queryScale = int16Query(
        vector,
        new Int16Array(scan.memory.buffer, block.query, width),
        prefixScan.prefix,
      );
      scan.dotsI8(block.values, rows, width, width, block.query, block.scales, queryScale, space.scores);
      space.mask(filter);
      const { found, space: work } = space.candidates(Math.min(prefixScan.candidates, rows));
      scan.dotsOf(matrix, stride, stride, query, work.picked, found, work.pickedScores);
      const picked = space.read(
        scan.best(work.pickedScores, work.picked, found, k, work.scratch, work.ids, work.scores),
        work,
      );
      // A masked row re-scored on every axis has a finite score again: leave it out by its group.
      return filter ? picked.filter((hit) => filter.allowed[filter.groups[hit.row] as number] === 1) : picked;
    },
  };
}

/** Int8 rows with their scales in a module's memory, or undefined without WebAssembly / memory / above 2,048 dims. */
export function wasmInt8Matrix(vectors: readonly Int8Vector[], dims: number): WasmMatrix | undefined {
  const stride = roundUp(Math.max(1, dims), 16);
  if (stride > MAX_INT8_AXES) return undefined;
  const scan = instantiate();
  if (!scan) return undefined;
  const rows = vectors.length;
  let space: ReturnType<typeof scanSpace>;
  let matrix: number;
  let scales: number;
  let query: number;
  try {
    space = scanSpace(scan, rows);
    matrix = space.reserve(rows * stride);
    scales = space.reserve(rows * 4);
    query = space.reserve(stride * 2);
  } catch {
    return undefined;
  }
  const values = new Int8Array(scan.memory.buffer, matrix, rows * stride);
  const scaleView = space.floats(scales, rows);
  vectors.forEach((vector, row) => {
    values.set(vector.values.subarray(0, dims), row * stride);
    scaleView[row] = vector.scale;
  });
  return {
    rows,
    search(vector, limit, _prefixScan, filter) {
      const k = Math.min(Math.max(0, limit), rows);
      if (k === 0) return [];
      const queryScale = int16Query(vector, new Int16Array(scan.memory.buffer, query, stride), dims);
      scan.dotsI8(matrix, rows, stride, stride, query, scales, queryScale, space.scores);
      space.mask(filter);
      return withoutMasked(space.top(k));
    },
  };
}

/**
 * Σ weights[i] × row ids[i] of `basis` (rows × dims) on WebAssembly SIMD: the corpus embedder's fold-in of a
 * passage. A fresh Float32Array of dims values each call; undefined without WebAssembly.
 */
export function wasmRowSum(
  basis: Float32Array,
  dims: number,
): ((ids: readonly number[], weights: readonly number[]) => Float32Array) | undefined {
  const scan = instantiate();
  if (!scan) return undefined;
  const stride = roundUp(Math.max(1, dims), 4);
  const rows = Math.floor(basis.length / Math.max(1, dims));
  let matrix: number;
  let out: number;
  try {
    matrix = scan.reserve(rows * stride * 4);
    out = scan.reserve(stride * 4);
    if (matrix === 0 || out === 0) return undefined;
  } catch {
    return undefined;
  }
  const view = new Float32Array(scan.memory.buffer, matrix, rows * stride);
  for (let row = 0; row < rows; row++) view.set(basis.subarray(row * dims, (row + 1) * dims), row * stride);
  let capacity = 0;
  let ids = 0;
  let weights = 0;
  return (rowIds, rowWeights) => {
    const count = rowIds.length;
    if (count > capacity) {
      capacity = Math.max(count, capacity * 2, 256);
      ids = scan.reserve(capacity * 4);
      weights = scan.reserve(capacity * 4);
      if (ids === 0 || weights === 0) throw new RangeError("the vector scan could not grow its memory");
    }
    new Int32Array(scan.memory.buffer, ids, count).set(rowIds);
    new Float32Array(scan.memory.buffer, weights, count).set(rowWeights);
    scan.combineRows(matrix, stride, ids, weights, count, out);
    return new Float32Array(scan.memory.buffer, out, dims).slice();
  };
}
