import { describe, expect, it } from "vitest";
import { mrrAt, ndcgAt, recallAt, scoreQuery } from "./metrics.js";

// Graded judgments: b is highly relevant (2), c and d relevant (1); a is not judged.
const relevant = new Map([
  ["b", 2],
  ["c", 1],
  ["d", 1],
]);

describe("ranking metrics", () => {
  it("nDCG@10 with graded qrels matches the hand-computed value", () => {
    // DCG = 2/log2(3) + 1/log2(4) = 1.761860; ideal = 2 + 1/log2(3) + 1/log2(4) = 3.130930
    expect(ndcgAt(["a", "b", "c"], relevant, 10)).toBeCloseTo(0.562729, 5);
    expect(ndcgAt(["b", "c", "d"], relevant, 10)).toBeCloseTo(1, 10);
    // At k = 1 only the first result counts: a is not relevant.
    expect(ndcgAt(["a", "b", "c"], relevant, 1)).toBe(0);
    expect(ndcgAt(["a"], new Map(), 10)).toBe(0);
  });

  it("recall@k counts the relevant documents in the first k once each", () => {
    expect(recallAt(["a", "b", "c"], relevant, 2)).toBeCloseTo(1 / 3, 10);
    expect(recallAt(["a", "b", "c"], relevant, 3)).toBeCloseTo(2 / 3, 10);
    expect(recallAt(["b", "b", "x"], relevant, 3)).toBeCloseTo(1 / 3, 10);
  });

  it("MRR@10 is the reciprocal rank of the first relevant document within 10", () => {
    expect(mrrAt(["a", "b", "c"], relevant, 10)).toBe(0.5);
    expect(mrrAt(["a", "x", "y", "c"], relevant, 10)).toBe(0.25);
    const late = [...Array.from({ length: 10 }, (_, i) => `n${i}`), "b"];
    expect(mrrAt(late, relevant, 10)).toBe(0);
  });

  it("scoreQuery reports nDCG@10, recall@k and MRR@10 together", () => {
    expect(scoreQuery(["a", "b", "c"], relevant, 2)).toEqual({
      ndcg10: expect.closeTo(0.562729, 5),
      recall: expect.closeTo(1 / 3, 10),
      mrr10: 0.5,
    });
  });
});
