import { describe, expect, it } from "vitest";
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "./lexical-index.js";

const q = (...terms: string[]) => new Map(terms.map((term) => [term, 1]));

describe("lexical index", () => {
  it("ranks by BM25: rarer terms and denser matches first", () => {
    const index = createLexicalIndex({ ...DEFAULT_LEXICAL_PARAMS, feedbackDocs: 0, proximityWeight: 0 });
    index.add(1, ["deploy", "bill", "servic"]);
    index.add(2, ["deploy", "search", "servic"]);
    index.add(3, ["bill", "bill", "invoic"]);
    index.add(4, ["holiday", "polici"]);
    const hits = index.search(q("bill", "deploy"), { limit: 10 });
    expect(hits.map((hit) => hit.key)).toEqual([1, 3, 2]);
    expect(index.search(q("unknown"), { limit: 10 })).toEqual([]);
  });

  it("forgets removed passages in results and statistics", () => {
    const index = createLexicalIndex();
    for (let key = 0; key < 20; key++) index.add(key, key % 2 === 0 ? ["alpha", "beta"] : ["gamma"]);
    expect(index.remove(4)).toBe(true);
    expect(index.remove(4)).toBe(false);
    const keys = index.search(q("alpha"), { limit: 100 }).map((hit) => hit.key);
    expect(keys).not.toContain(4);
    expect(keys).toHaveLength(9);
    expect(index.size).toBe(19);
    expect(() => index.add(5, ["x"])).toThrow(/already holds/);
  });

  it("rewards query terms that occur close together", () => {
    const index = createLexicalIndex({ ...DEFAULT_LEXICAL_PARAMS, feedbackDocs: 0 });
    index.add(1, ["boundari", "x", "x", "x", "x", "x", "x", "x", "layer"]);
    index.add(2, ["boundari", "layer", "x", "x", "x", "x", "x", "x", "x"]);
    expect(index.search(q("boundari", "layer"), { limit: 2 })[0]?.key).toBe(2);
  });

  it("expands queries with terms of the top results (RM3)", () => {
    const index = createLexicalIndex({
      ...DEFAULT_LEXICAL_PARAMS,
      proximityWeight: 0,
      feedbackMaxDfRatio: 1,
    });
    index.add(1, ["wing", "aerofoil", "lift", "aerofoil"]);
    index.add(2, ["aerofoil", "lift", "drag"]);
    for (let key = 10; key < 30; key++) index.add(key, ["noise", `n${key}`]);
    const plain = index.search(q("wing"), { limit: 10, feedback: false }).map((hit) => hit.key);
    const expanded = index.search(q("wing"), { limit: 10 }).map((hit) => hit.key);
    expect(plain).toEqual([1]);
    expect(expanded).toEqual([1, 2]);
  });
});
