import { describe, expect, it } from "vitest";
import {
  addPassage,
  addPassageText,
  compactData,
  createLexicalData,
  removePassage,
  slotOf,
  snapshotOf,
} from "./lexical-data.js";
import { DEFAULT_LEXICAL_PARAMS } from "./lexical-index.js";
import { addTerm, createVocabulary, findTermIn, hashOf, type Vocabulary } from "./lexical-vocabulary.js";

describe("lexical data", () => {
  it("compaction keeps only live postings, base then tail, and moves the tail's sequences after the base", () => {
    const data = createLexicalData(DEFAULT_LEXICAL_PARAMS);
    addPassage(data, 1, ["a", "b", "a"], 0);
    addPassage(data, 2, ["b"], 0);
    compactData(data);
    addPassage(data, 3, ["a", "c"], 0);
    removePassage(data, 2);
    const state = snapshotOf(data);
    expect(state.terms).toEqual(["a", "b", "c"]);
    // Term a: slot 0 (tf 2) from the base, slot 2 (tf 1) from the tail; b: slot 1 is dead, so only slot 0.
    expect([...state.termStart]).toEqual([0, 4, 6, 8]);
    expect([...state.postings]).toEqual([0, 2, 2, 1, 0, 1, 2, 1]);
    expect([...state.df]).toEqual([2, 1, 1]);
    expect([...state.alive]).toEqual([1, 0, 1]);
    expect([...state.sequenceStart]).toEqual([0, 3, 4]);
    expect([...state.sequence]).toEqual([0, 1, 0, 1, 0, 2]);
  });

  it("finds slots by key in and out of key order, live ones only", () => {
    const data = createLexicalData(DEFAULT_LEXICAL_PARAMS);
    for (const key of [10, 20, 30]) addPassage(data, key, ["x"], 0);
    expect([slotOf(data, 20), slotOf(data, 25)]).toEqual([1, -1]);
    addPassageText(data, 5, "y z", 0);
    removePassage(data, 30);
    expect([slotOf(data, 5), slotOf(data, 10), slotOf(data, 30)]).toEqual([3, 0, -1]);
    // A restored index whose keys do not ascend still finds them.
    const restored = createLexicalData(DEFAULT_LEXICAL_PARAMS, snapshotOf(data));
    expect([slotOf(restored, 5), slotOf(restored, 20), slotOf(restored, 30)]).toEqual([3, 1, -1]);
    expect(restored.liveCount).toBe(3);
    expect(restored.totalLength).toBe(4);
  });
});

describe("lexical vocabulary", () => {
  it("finds a known term inside a larger text, never a prefix or an extension of one, across table growth", () => {
    const vocabulary = createVocabulary(["abc"]);
    const text = "xx abc ab abcd";
    expect(findTermIn(vocabulary, text, 3, 6)).toBe(0);
    expect(findTermIn(vocabulary, text, 7, 9)).toBe(-1);
    expect(findTermIn(vocabulary, text, 10, 14)).toBe(-1);
    for (let i = 0; i < 5000; i++) addTerm(vocabulary, `t${i}`);
    expect(vocabulary.hashed.length).toBeGreaterThan(4096);
    expect(findTermIn(vocabulary, text, 3, 6)).toBe(0);
    expect(findTermIn(vocabulary, "t4999 t0", 0, 5)).toBe(5000);
    expect(findTermIn(vocabulary, "t4999 t0", 6, 8)).toBe(1);
  });

  it("tells a term from a longer one that lands on its cell", () => {
    // A two-cell table with "abc" where "abcd" hashes to: the probe meets "abc" first.
    const hashed = new Int32Array(2);
    hashed[hashOf("abcd", 0, 4) & 1] = 1;
    const vocabulary: Vocabulary = { ids: new Map([["abc", 0]]), text: ["abc"], hashed };
    expect(findTermIn(vocabulary, "abcd", 0, 4)).toBe(-1);
  });
});
