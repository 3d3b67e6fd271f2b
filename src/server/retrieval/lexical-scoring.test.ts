import { describe, expect, it } from "vitest";
import { addPassage, createLexicalData, type LexicalData } from "./lexical-data.js";
import { DEFAULT_LEXICAL_PARAMS } from "./lexical-index.js";
import { topK } from "./lexical-scoring.js";

/** Data whose search under way has touched `scores` (by key, in that order), keys added in `keys` order. */
function scored(keys: number[], scores: [number, number][]): LexicalData {
  const data = createLexicalData(DEFAULT_LEXICAL_PARAMS);
  for (const key of keys) addPassage(data, key, ["t"], key % 2);
  for (const [key, score] of scores) {
    const slot = keys.indexOf(key);
    data.cells[slot * 2 + 1] = score;
    data.touched[data.touchedCount++] = slot;
  }
  return data;
}

describe("top-k", () => {
  it("keeps the best by score, ties to the smaller key, whatever order the slots were added and touched in", () => {
    const keys = [7, 3, 9, 1, 5, 2];
    const data = scored(keys, [
      [9, 1],
      [3, 4],
      [1, 4],
      [7, 2],
      [5, 4],
      [2, 0.5],
    ]);
    expect(topK(data, 4)).toEqual([
      { key: 1, score: 4 },
      { key: 3, score: 4 },
      { key: 5, score: 4 },
      { key: 7, score: 2 },
    ]);
    // A tie at the cut: the smaller keys make it.
    expect(topK(data, 2)).toEqual([
      { key: 1, score: 4 },
      { key: 3, score: 4 },
    ]);
    expect(topK(data, 0)).toEqual([]);
    expect(topK(data, 10)).toHaveLength(6);
  });

  it("rescales every touched score on the way (zero ends the search) and passes over groups a mask leaves out", () => {
    const data = scored(
      [1, 2, 3, 4],
      [
        [1, 1],
        [2, 2],
        [3, 3],
        [4, 4],
      ],
    );
    // Odd keys are in group 1, even keys in group 0.
    expect(topK(data, 1, 0.5, new Uint8Array([0, 1]))).toEqual([{ key: 3, score: 3 }]);
    expect(topK(data, 2)).toEqual([
      { key: 4, score: 2 },
      { key: 3, score: 1.5 },
    ]);
    topK(data, 1, 0);
    expect(data.touchedCount).toBe(0);
    expect([...data.cells.subarray(0, 8)].filter((_, cell) => cell % 2 === 1)).toEqual([0, 0, 0, 0]);
  });
});
