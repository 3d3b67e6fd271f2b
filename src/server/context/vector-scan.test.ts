// The bounded-heap scan returns what a full sort of every row's dot product would.
import { describe, expect, it } from "vitest";
import { gaussian } from "./lsa.js";
import { type PackedRows, topRows } from "./vector-scan.js";

const rowsOf = (values: Float32Array, dims: number): PackedRows => ({ values, dims });

describe("topRows", () => {
  it("matches the full sort, ties broken by row", () => {
    const random = gaussian(3);
    const dims = 6;
    const rows = 500;
    const matrix = Float32Array.from({ length: rows * dims }, () => Math.round(random() * 2) / 2);
    const query = Float32Array.from({ length: dims }, () => Math.round(random()));
    const all = [...Array(rows).keys()]
      .map((row) => {
        let score = 0;
        for (let d = 0; d < dims; d++) score += (matrix[row * dims + d] as number) * (query[d] as number);
        return { row, score };
      })
      .sort((a, b) => b.score - a.score || a.row - b.row);
    for (const limit of [1, 7, 50, 500, 900])
      expect(topRows(rowsOf(matrix, dims), query, limit)).toEqual(all.slice(0, limit));
    expect(topRows(rowsOf(new Float32Array(0), dims), query, 5)).toEqual([]);
  });
});

describe("topRows with a prefix scan", () => {
  it("is the exact scan when the candidates cover every row, and finds rows whose energy leads", () => {
    const random = gaussian(5);
    const dims = 32;
    const rows = 3000;
    // Axis d scaled by 1/(d+1): most of each row's energy in its leading axes, as in an LSA space.
    const matrix = Float32Array.from({ length: rows * dims }, (_, i) => random() / ((i % dims) + 1));
    const query = Float32Array.from({ length: dims }, (_, d) => random() / (d + 1));
    const exact = topRows(rowsOf(matrix, dims), query, 10);
    expect(topRows(rowsOf(matrix, dims), query, 10, { prefix: 4, candidates: rows })).toEqual(exact);
    const fast = topRows(rowsOf(matrix, dims), query, 10, { prefix: 8, candidates: 300 });
    const found = fast.filter((hit) => exact.some((best) => best.row === hit.row)).length;
    expect(found).toBeGreaterThanOrEqual(9);
  });
});

describe("topRows on int8 rows", () => {
  it("scores each row as its values times its scale, as the dequantised float32 rows would", () => {
    const random = gaussian(11);
    const dims = 8;
    const rows = 400;
    const values = Int8Array.from({ length: rows * dims }, () => Math.round(random() * 40));
    const scales = Float32Array.from({ length: rows }, () => 0.01 + Math.abs(random()) / 50);
    const dequantised = Float32Array.from(
      values,
      (value, i) => value * (scales[Math.floor(i / dims)] as number),
    );
    const query = Float32Array.from({ length: dims }, () => random());
    const int8 = topRows({ values, scales, dims }, query, 20);
    const float = topRows(rowsOf(dequantised, dims), query, 20);
    expect(int8.map((hit) => hit.row)).toEqual(float.map((hit) => hit.row));
    for (const [i, hit] of int8.entries())
      expect(hit.score).toBeCloseTo((float[i] as { score: number }).score, 4);
  });
});
