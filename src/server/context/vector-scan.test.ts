// The bounded-heap scan returns what a full sort of every row's dot product would.
import { describe, expect, it } from "vitest";
import { gaussian } from "./lsa.js";
import { topRowsByDot, topRowsByPrefixDot } from "./vector-scan.js";

describe("topRowsByDot", () => {
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
      expect(topRowsByDot(matrix, dims, query, limit)).toEqual(all.slice(0, limit));
    expect(topRowsByDot(new Float32Array(0), dims, query, 5)).toEqual([]);
  });
});

describe("topRowsByPrefixDot", () => {
  it("is the exact scan when the candidates cover every row, and finds rows whose energy leads", () => {
    const random = gaussian(5);
    const dims = 32;
    const rows = 3000;
    // Axis d scaled by 1/(d+1): most of each row's energy in its leading axes, as in an LSA space.
    const matrix = Float32Array.from({ length: rows * dims }, (_, i) => random() / ((i % dims) + 1));
    const query = Float32Array.from({ length: dims }, (_, d) => random() / (d + 1));
    const exact = topRowsByDot(matrix, dims, query, 10);
    expect(topRowsByPrefixDot(matrix, dims, query, 10, { prefix: 4, candidates: rows })).toEqual(exact);
    const fast = topRowsByPrefixDot(matrix, dims, query, 10, { prefix: 8, candidates: 300 });
    const found = fast.filter((hit) => exact.some((best) => best.row === hit.row)).length;
    expect(found).toBeGreaterThanOrEqual(9);
  });
});
