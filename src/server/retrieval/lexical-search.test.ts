import { describe, expect, it } from "vitest";
import { addPassage, createLexicalData, type LexicalData } from "./lexical-data.js";
import { DEFAULT_LEXICAL_PARAMS, type LexicalParams } from "./lexical-index.js";
import { expansion, rerankByProximity } from "./lexical-search.js";

function dataOf(params: Partial<LexicalParams>, passages: string[][]): LexicalData {
  const data = createLexicalData({ ...DEFAULT_LEXICAL_PARAMS, ...params });
  for (const [key, terms] of passages.entries()) addPassage(data, key, terms, 0);
  return data;
}

const id = (data: LexicalData, term: string) => data.vocabulary.ids.get(term) as number;

describe("RM3 expansion", () => {
  it("weighs each term by its frequency in the top passages, per passage length and share of the scores", () => {
    const data = dataOf({ originalWeight: 0.6, feedbackTerms: 10, feedbackMaxDfRatio: 1 }, [
      ["a", "b", "b", "c"],
      ["a", "d"],
    ]);
    const rm3 = expansion(data, new Map([[id(data, "a"), 2]]), [
      { key: 0, score: 3 },
      { key: 1, score: 1 },
    ]);
    // Candidates: a = 0.75/4 + 0.25/2, b = 2 * 0.75/4, c = 0.75/4, d = 0.25/2 (sum 1); 0.4 of the query.
    const expected = { a: 0.3125, b: 0.375, c: 0.1875, d: 0.125 };
    expect(rm3?.originalFactor).toBeCloseTo(0.3);
    for (const [term, weight] of Object.entries(expected))
      expect(rm3?.added.get(id(data, term))).toBeCloseTo(0.4 * weight);
  });

  it("leaves out near-stopwords and keeps only the heaviest terms", () => {
    const passages = [["a", "rare", "rare", "other"], ...Array.from({ length: 9 }, () => ["a", "filler"])];
    const data = dataOf({ feedbackTerms: 1, feedbackMaxDfRatio: 0.5 }, passages);
    const rm3 = expansion(data, new Map([[id(data, "rare"), 1]]), [{ key: 0, score: 1 }]);
    expect([...(rm3?.added.keys() ?? [])]).toEqual([id(data, "rare")]);
  });
});

describe("proximity re-ranking", () => {
  it("adds more for query terms adjacent than a few terms apart, nothing beyond the window, and re-sorts", () => {
    const data = dataOf({ proximityWindow: 3 }, [
      ["p", "x", "x", "q"],
      ["p", "q", "x", "x"],
      ["p", "x", "x", "x", "x", "q"],
    ]);
    const weights = new Map([
      [id(data, "p"), 1],
      [id(data, "q"), 1],
    ]);
    const hits = [0, 1, 2].map((key) => ({ key, score: 1 }));
    const reranked = rerankByProximity(data, weights, hits);
    expect(reranked.map((hit) => hit.key)).toEqual([1, 0, 2]);
    expect(reranked[1]?.score).toBeGreaterThan(1);
    expect(reranked[2]?.score).toBe(1);
  });
});
