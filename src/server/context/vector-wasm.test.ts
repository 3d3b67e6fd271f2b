// The WebAssembly scan gives the JavaScript scan's rows (its reference), exact and with a prefix pass.
import { describe, expect, it } from "vitest";
import { gaussian } from "./lsa.js";
import { quantize } from "./vector-matrix.js";
import { topRows } from "./vector-scan.js";
import { wasmFloatMatrix, wasmInt8Matrix, wasmRowSum } from "./vector-wasm.js";

function rowsOf(random: () => number, count: number, dims: number, decay = false): Float32Array[] {
  return Array.from({ length: count }, () =>
    Float32Array.from({ length: dims }, (_, d) => random() / (decay ? d + 1 : 1)),
  );
}

const flat = (vectors: readonly Float32Array[], dims: number) => {
  const values = new Float32Array(vectors.length * dims);
  for (const [row, vector] of vectors.entries()) values.set(vector, row * dims);
  return { values, dims };
};

describe("the WebAssembly vector scan", () => {
  it("ranks the rows the JavaScript scan ranks, for dims that are and are not a multiple of four", () => {
    const random = gaussian(7);
    for (const dims of [4, 6, 37, 128]) {
      const vectors = rowsOf(random, 700, dims);
      const matrix = wasmFloatMatrix(vectors, dims);
      expect(matrix?.rows).toBe(700);
      for (const limit of [1, 10, 700, 900]) {
        const query = Float32Array.from({ length: dims }, () => random());
        const wasm = matrix?.search(query, limit) ?? [];
        const reference = topRows(flat(vectors, dims), query, limit);
        expect(wasm.map((hit) => hit.row)).toEqual(reference.map((hit) => hit.row));
        for (const [i, hit] of wasm.entries())
          expect(hit.score).toBeCloseTo((reference[i] as { score: number }).score, 3);
      }
    }
  });

  it("breaks ties by the lower row, as the reference does", () => {
    const vectors = Array.from({ length: 50 }, (_, row) => Float32Array.from([row % 5, 0, 0, 0]));
    const hits = wasmFloatMatrix(vectors, 4)?.search(Float32Array.from([1, 0, 0, 0]), 12) ?? [];
    expect(hits.map((hit) => hit.row)).toEqual([4, 9, 14, 19, 24, 29, 34, 39, 44, 49, 3, 8]);
  });

  it("runs the two-stage prefix scan as the reference does, and exactly when the candidates cover every row", () => {
    const random = gaussian(5);
    const dims = 32;
    const vectors = rowsOf(random, 3000, dims, true);
    const matrix = wasmFloatMatrix(vectors, dims);
    const query = Float32Array.from({ length: dims }, (_, d) => random() / (d + 1));
    const reference = topRows(flat(vectors, dims), query, 10, { prefix: 8, candidates: 300 });
    expect(matrix?.search(query, 10, { prefix: 8, candidates: 300 }).map((hit) => hit.row)).toEqual(
      reference.map((hit) => hit.row),
    );
    const exact = topRows(flat(vectors, dims), query, 10);
    expect(matrix?.search(query, 10, { prefix: 8, candidates: 3000 }).map((hit) => hit.row)).toEqual(
      exact.map((hit) => hit.row),
    );
  });

  it("picks the prefix pass's candidates from a sample's threshold as the full selection would, at scale", () => {
    const random = gaussian(9);
    const dims = 32;
    // 20,000 rows for 300 candidates: the sampled threshold admits a few more than 300, the heap keeps 300.
    const vectors = rowsOf(random, 20_000, dims, true);
    const matrix = wasmFloatMatrix(vectors, dims);
    for (let i = 0; i < 5; i++) {
      const query = Float32Array.from({ length: dims }, (_, d) => random() / (d + 1));
      const reference = topRows(flat(vectors, dims), query, 20, { prefix: 8, candidates: 300 });
      expect(matrix?.search(query, 20, { prefix: 8, candidates: 300 }).map((hit) => hit.row)).toEqual(
        reference.map((hit) => hit.row),
      );
    }
    // Every row alike: the threshold admits them all, more than it has room for, and the full selection decides.
    const alike = wasmFloatMatrix(
      Array.from({ length: 20_000 }, () => new Float32Array(dims).fill(1)),
      dims,
    );
    const hits = alike?.search(new Float32Array(dims).fill(1), 3, { prefix: 8, candidates: 300 }) ?? [];
    expect(hits.map((hit) => hit.row)).toEqual([0, 1, 2]);
  });

  it("scans int8 rows (a scale each) as the JavaScript scan of the same rows does", () => {
    const random = gaussian(13);
    for (const dims of [16, 20, 384]) {
      const vectors = rowsOf(random, 1500, dims).map(quantize);
      const matrix = wasmInt8Matrix(vectors, dims);
      const values = new Int8Array(vectors.length * dims);
      const scales = new Float32Array(vectors.length);
      vectors.forEach((vector, row) => {
        values.set(vector.values, row * dims);
        scales[row] = vector.scale;
      });
      const query = Float32Array.from({ length: dims }, () => random());
      const wasm = matrix?.search(query, 10) ?? [];
      const reference = topRows({ values, scales, dims }, query, 10);
      expect(wasm.map((hit) => hit.row)).toEqual(reference.map((hit) => hit.row));
      // The query goes in as int16 lanes: scores agree to about 1e-4 of their size.
      for (const [i, hit] of wasm.entries()) {
        const expected = (reference[i] as { score: number }).score;
        expect(Math.abs(hit.score - expected)).toBeLessThanOrEqual(1e-3 * Math.abs(expected));
      }
    }
  });

  it("sums weighted rows as the corpus embedder's fold-in does in JavaScript", () => {
    const random = gaussian(17);
    for (const dims of [3, 8, 128]) {
      const basis = Float32Array.from({ length: 50 * dims }, () => random());
      const sum = wasmRowSum(basis, dims);
      const ids = [4, 0, 49, 4, 17];
      const weights = [0.5, -1.25, 2, 0.75, 0.1];
      const expected = new Float64Array(dims);
      ids.forEach((id, i) => {
        for (let d = 0; d < dims; d++)
          expected[d] = (expected[d] as number) + (weights[i] as number) * (basis[id * dims + d] as number);
      });
      const got = sum?.(ids, weights);
      expect(got?.length).toBe(dims);
      for (let d = 0; d < dims; d++) expect(got?.[d]).toBeCloseTo(expected[d] as number, 4);
      expect(Array.from(sum?.([], []) ?? [1])).toEqual(new Array(dims).fill(0));
    }
  });

  it("answers an empty matrix and a zero limit with no rows", () => {
    expect(wasmFloatMatrix([], 8)?.search(new Float32Array(8), 5)).toEqual([]);
    expect(wasmFloatMatrix(rowsOf(gaussian(1), 3, 8), 8)?.search(new Float32Array(8), 0)).toEqual([]);
  });
});

describe("a scan confined by a row filter", () => {
  it("returns only rows of allowed groups, best first, in JavaScript and on WebAssembly alike", () => {
    const random = gaussian(13);
    const dims = 16;
    const vectors = rowsOf(random, 2000, dims);
    // Five groups; group 3 holds a tenth of the rows, fewer than the largest limit asked for.
    const groups = Uint32Array.from({ length: vectors.length }, (_, row) => (row % 10 === 0 ? 3 : row % 3));
    const allowed = Uint8Array.from([0, 1, 0, 1, 0]);
    const filter = { groups, allowed };
    const query = Float32Array.from({ length: dims }, () => random());
    const everything = topRows(flat(vectors, dims), query, vectors.length);
    for (const limit of [5, 700, 2000]) {
      const expected = everything.filter((hit) => allowed[groups[hit.row] as number] === 1).slice(0, limit);
      const js = topRows(flat(vectors, dims), query, limit, undefined, filter);
      expect(js.map((hit) => hit.row)).toEqual(expected.map((hit) => hit.row));
      const float = wasmFloatMatrix(vectors, dims)?.search(query, limit, undefined, filter) ?? [];
      expect(float.map((hit) => hit.row)).toEqual(expected.map((hit) => hit.row));
      const int8 = wasmInt8Matrix(vectors.map(quantize), dims)?.search(query, limit, undefined, filter) ?? [];
      expect(int8.length).toBe(expected.length);
      expect(int8.every((hit) => allowed[groups[hit.row] as number] === 1)).toBe(true);
      // Prefix scans keep to the filter too, whatever the candidates bring back.
      const prefix = { prefix: 8, candidates: 300 };
      for (const hits of [
        topRows(flat(vectors, dims), query, limit, prefix, filter),
        wasmFloatMatrix(vectors, dims)?.search(query, limit, prefix, filter) ?? [],
      ]) {
        expect(hits.length).toBeGreaterThan(0);
        expect(hits.every((hit) => allowed[groups[hit.row] as number] === 1)).toBe(true);
      }
    }
    // Nothing allowed: nothing found.
    const none = { groups, allowed: new Uint8Array(5) };
    expect(topRows(flat(vectors, dims), query, 10, undefined, none)).toEqual([]);
    expect(wasmFloatMatrix(vectors, dims)?.search(query, 10, undefined, none)).toEqual([]);
  });
});
