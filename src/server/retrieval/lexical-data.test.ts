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
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "./lexical-index.js";
import { addTerm, createVocabulary, findTermIn, hashOf, type Vocabulary } from "./lexical-vocabulary.js";
import { TF_BITS, TF_ESCAPE } from "./packed-arrays.js";

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
    expect([...state.termStart]).toEqual([0, 2, 3, 4]);
    const pairs = [...state.postings].map((posting) => [posting >>> TF_BITS, posting & TF_ESCAPE]);
    expect(pairs).toEqual([
      [0, 2],
      [2, 1],
      [0, 1],
      [2, 1],
    ]);
    expect([...state.df]).toEqual([2, 1, 1]);
    expect([...state.alive]).toEqual([1, 0, 1]);
    expect([...state.sequenceStart]).toEqual([0, 3, 4]);
    expect([...state.sequence]).toEqual([0, 1, 0, 1, 0, 2]);
  });

  it("scores a term 127 or more times in a passage with its exact tf, restored from a snapshot too", () => {
    const repeated = (word: string, times: number, filler: number) => [
      ...Array.from({ length: times }, () => word),
      ...Array.from({ length: filler }, (_, i) => `f${i}`),
    ];
    // tf 126 fits a posting; 127, 300 and 70,000 (past the 65,535 cap) are read from the sequence.
    const tfs = [126, 127, 300, 70_000];
    const index = createLexicalIndex();
    for (const [i, tf] of tfs.entries()) index.add(i + 1, repeated("w", tf, 10), 0);
    index.add(9, ["other"]);
    const { k1, b } = DEFAULT_LEXICAL_PARAMS;
    const lengths = [...tfs.map((tf) => tf + 10), 1];
    const average = lengths.reduce((sum, length) => sum + length, 0) / lengths.length;
    const idf = Math.log(1 + (5 - 4 + 0.5) / (4 + 0.5));
    const expected = tfs.map((raw, i) => {
      const tf = Math.min(raw, 0xffff);
      return idf * (k1 + 1) * (tf / (tf + k1 * (1 - b + (b * (lengths[i] as number)) / average)));
    });
    const scores = (searched: typeof index) => {
      const hits = searched.search(new Map([["w", 1]]), { limit: 10, feedback: false });
      return [1, 2, 3, 4].map((key) => hits.find((hit) => hit.key === key)?.score ?? 0);
    };
    const check = (found: number[]) => {
      for (const [i, score] of found.entries()) expect(score).toBeCloseTo(expected[i] as number, 5);
    };
    check(scores(index));
    index.compact();
    check(scores(index));
    check(scores(createLexicalIndex(DEFAULT_LEXICAL_PARAMS, index.state())));
  });

  it("a bulk load (a rebuild) ends in the same index as passages added one by one, removals included", () => {
    const random = (() => {
      let seed = 7;
      return () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
    })();
    const texts = Array.from({ length: 400 }, () =>
      Array.from(
        { length: 1 + Math.floor(random() * 150) },
        () => `t${Math.floor(random() ** 3 * 300)}`,
      ).join(" "),
    );
    // A term 200 times: its tf is past what a posting holds.
    texts[17] = Array.from({ length: 200 }, () => "t5").join(" ");
    const build = (bulk: boolean) => {
      const index = createLexicalIndex(DEFAULT_LEXICAL_PARAMS, undefined, { bulk });
      for (const [i, text] of texts.entries()) {
        index.addText(i + 1, text);
        if (i % 50 === 49) index.remove(i - 10);
      }
      return index;
    };
    const one = build(false);
    const bulk = build(true);
    const query = new Map([
      ["t5", 1],
      ["t40", 1],
      ["t2", 0.5],
    ]);
    // The first search lays the bulk load's postings out; passages added after it are searched at once.
    expect(bulk.search(query, { limit: 20 })).toEqual(one.search(query, { limit: 20 }));
    for (const index of [one, bulk]) index.addText(1000, "t5 t40 t40 t2");
    expect(bulk.search(query, { limit: 20 })).toEqual(one.search(query, { limit: 20 }));
    expect(bulk.state()).toEqual(one.state());
    const compacted = createLexicalIndex(DEFAULT_LEXICAL_PARAMS, undefined, { bulk: true });
    for (const [i, text] of texts.entries()) compacted.addText(i + 1, text);
    compacted.compact();
    const plain = createLexicalIndex();
    for (const [i, text] of texts.entries()) plain.addText(i + 1, text);
    expect(compacted.state()).toEqual(plain.state());
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
