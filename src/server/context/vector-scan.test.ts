// The bounded-heap scan returns what a full sort of every row's dot product would.
import { describe, expect, it } from "vitest";
import { gaussian } from "./lsa.js";
import { topRowsByDot } from "./vector-scan.js";

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
