import { describe, expect, it } from "vitest";
import {
  ALLOWED_BITMAPS,
  createLexicalIndex,
  DEFAULT_LEXICAL_PARAMS,
  type LexicalIndex,
  type LexicalParams,
} from "./lexical-index.js";

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
  it("adds space-separated text exactly as the split terms, however large the vocabulary grows", () => {
    const texts = ["", "a  b", " lead", "trail ", "x"];
    for (let key = 0; key < 3000; key++)
      texts.push(Array.from({ length: 1 + (key % 7) }, (_, i) => `w${(key * 31 + i * 17) % 5000}`).join(" "));
    const bySplit = createLexicalIndex();
    const byText = createLexicalIndex();
    texts.forEach((text, key) => {
      bySplit.add(key, text.length > 0 ? text.split(" ") : []);
      byText.addText(key, text);
    });
    expect(byText.state()).toEqual(bySplit.state());
    // A restored index goes on finding its terms in text (its term table is rebuilt from the dictionary).
    const restored = createLexicalIndex(DEFAULT_LEXICAL_PARAMS, byText.state());
    restored.addText(5000, "w1 w2 new");
    bySplit.add(5000, ["w1", "w2", "new"]);
    expect(restored.state()).toEqual(bySplit.state());
    expect(restored.search(q("w1", "new"), { limit: 5 })).toEqual(
      bySplit.search(q("w1", "new"), { limit: 5 }),
    );
  });
});

describe("synced index", () => {
  it("gives the event loop turns during a long catch-up from a store that answers at once", async () => {
    const { createSyncedIndex } = await import("./synced-index.js");
    // Promises resolved at once, as the SQLite store's are: without yields the whole load is one microtask chain.
    const index = createSyncedIndex<{ n: number }>({
      generation: async () => 1,
      removedSince: async () => [],
      addedAfter: async (after, limit) =>
        Array.from({ length: Math.max(0, Math.min(limit, 5_000 - after)) }, (_, i) => ({
          key: after + i + 1,
          terms: "alpha beta",
          meta: { n: after + i + 1 },
        })),
      languages: async () => ["en"],
    });
    let turns = 0;
    const tick = () => {
      turns += 1;
      if (turns < 1_000) setImmediate(tick);
    };
    setImmediate(tick);
    await index.refresh();
    const during = turns;
    expect(index.size).toBe(5_000);
    // Other callbacks ran while the 5,000 rows were added (a timer or a request would have too).
    expect(during).toBeGreaterThan(2);
  });

  it("follows a store's additions and removals, and rebuilds once removed passages dominate", async () => {
    const { createSyncedIndex } = await import("./synced-index.js");
    const rows = new Map<number, string>();
    const removed: { key: number; generation: number }[] = [];
    let generation = 0;
    const index = createSyncedIndex<{ n: number }>({
      generation: async () => generation,
      removedSince: async (since) =>
        removed.filter((entry) => entry.generation > since).map((entry) => entry.key),
      addedAfter: async (after, limit) =>
        [...rows]
          .filter(([key]) => key > after)
          .slice(0, limit)
          .map(([key, terms]) => ({ key, terms, meta: { n: key } })),
      languages: async () => ["en"],
    });
    for (let key = 1; key <= 12_000; key++) rows.set(key, key % 2 ? "alpha beta" : "gamma");
    generation = 1;
    await index.refresh();
    expect(index.size).toBe(12_000);
    generation = 2;
    for (let key = 1; key <= 11_000; key++) {
      rows.delete(key);
      removed.push({ key, generation: 2 });
    }
    await index.refresh();
    expect(index.size).toBe(1_000);
    // 11,000 removed passages outnumber the live ones: the index was rebuilt without them.
    expect(index.dead).toBe(0);
    const hits = index.search(new Map([["alpha", 1]]), { limit: 5000 });
    expect(hits.every((hit) => hit.key > 11_000)).toBe(true);
    expect(hits).toHaveLength(500);
    expect(index.meta(11_001)).toEqual({ n: 11_001 });
  });
});

describe("lexical index groups", () => {
  it("ranks only the allowed groups, so that other groups cannot crowd them out of the top results", () => {
    const index = createLexicalIndex();
    // Fifty strong matches in group 1, one weak one in group 0.
    for (let key = 1; key <= 50; key++) index.add(key, ["budget", "budget", "plan"], 1);
    index.add(100, ["budget", "holiday", "travel", "note", "long", "text"], 0);
    const mask = new Uint8Array([1, 0]);
    expect(index.search(q("budget"), { limit: 10, groups: mask }).map((hit) => hit.key)).toEqual([100]);
    expect(index.search(q("budget"), { limit: 10 }).map((hit) => hit.key)).not.toContain(100);
    // A group left out of the mask has no results at all.
    expect(index.search(q("holiday"), { limit: 10, groups: new Uint8Array([0, 1]) })).toEqual([]);
  });

  it("keeps a mask's bitmap of allowed passages right through additions, removals, updates and growth", () => {
    // Passages of four groups from a small vocabulary (a fixed LCG), so that every query matches many of each.
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed / 2 ** 32;
    };
    const vocabulary = Array.from({ length: 40 }, (_, i) => `t${i}`);
    const passage = () =>
      Array.from(
        { length: 3 + Math.floor(random() * 8) },
        () => vocabulary[Math.floor(random() * 40)] as string,
      );
    const check = (params: LexicalParams) => {
      const index = createLexicalIndex(params);
      /** Every change made so far, to replay on an index that never searched (its bitmap made at the end). */
      const changes: ((target: LexicalIndex) => void)[] = [];
      const change = (apply: (target: LexicalIndex) => void) => {
        apply(index);
        changes.push(apply);
      };
      let live: { key: number; terms: string[]; group: number }[] = [];
      let next = 1;
      const add = (count: number) => {
        for (let i = 0; i < count; i++) {
          const entry = { key: next++, terms: passage(), group: Math.floor(random() * 4) };
          change((target) => target.add(entry.key, entry.terms, entry.group));
          live.push(entry);
        }
      };
      const remove = (key: number) => {
        expect(index.has(key)).toBe(true);
        change((target) => target.remove(key));
        live = live.filter((entry) => entry.key !== key);
      };
      const mask = new Uint8Array([1, 0, 1, 0]);
      const queries = [q("t1", "t2"), q("t3"), q("t5", "t7", "t9"), q("t0", "t39")];
      const same = () => {
        const replayed = createLexicalIndex(params);
        for (const apply of changes) apply(replayed);
        for (const query of queries) {
          // The same groups, as a mask of another length.
          const expected = replayed.search(query, { limit: 20, groups: new Uint8Array([1, 0, 1]) });
          expect(expected.length).toBeGreaterThan(0);
          expect(index.search(query, { limit: 20, groups: mask })).toEqual(expected);
        }
      };
      add(300);
      same();
      // Removals of allowed and other passages, updates (a page rewritten: old key gone, a new one in another
      // group), and enough additions to grow every per-slot array (and the bitmap) past its first capacity.
      for (const entry of live.slice(0, 120).filter((_, i) => i % 3 === 0)) remove(entry.key);
      for (const entry of live.slice(0, 60).filter((_, i) => i % 2 === 0)) {
        remove(entry.key);
        const updated = { key: next++, terms: entry.terms, group: (entry.group + 1) % 4 };
        change((target) => target.add(updated.key, updated.terms, updated.group));
        live.push(updated);
      }
      add(2_500);
      same();
      // More masks in use than the index keeps bitmaps for: those without one are searched without, alike.
      const others = Array.from(
        { length: ALLOWED_BITMAPS + 2 },
        (_, other) => new Uint8Array([0, 1, 0, 0, ...new Array(other).fill(0), 1]),
      );
      for (const other of others) index.search(q("t1"), { limit: 5, groups: other });
      const replayed = createLexicalIndex(params);
      for (const apply of changes) apply(replayed);
      for (const other of others.slice(-3))
        for (const query of queries)
          expect(index.search(query, { limit: 20, groups: other })).toEqual(
            replayed.search(query, { limit: 20, groups: other }),
          );
      for (const entry of live.slice(-50)) remove(entry.key);
      same();
      change((target) => target.compact());
      add(10);
      same();
    };
    check(DEFAULT_LEXICAL_PARAMS);
    // Without feedback or proximity, a confined search is the full ranking with other groups left out.
    const plain = { ...DEFAULT_LEXICAL_PARAMS, feedbackDocs: 0, proximityWeight: 0 };
    check(plain);
    const index = createLexicalIndex(plain);
    for (let key = 1; key <= 2_000; key++) index.add(key, passage(), key % 3);
    for (let key = 1; key <= 2_000; key += 7) index.remove(key);
    const mask = new Uint8Array([0, 1, 1]);
    for (const query of [q("t1", "t2"), q("t4")]) {
      const everything = index.search(query, { limit: 2_000 });
      const allowed = everything.filter((hit) => hit.key % 3 !== 0).slice(0, 50);
      expect(index.search(query, { limit: 50, groups: mask })).toEqual(allowed);
    }
  });
});

describe("lexical index windows", () => {
  it("scores a window of passages as one passage: terms spread over its passages all count", () => {
    const index = createLexicalIndex();
    index.add(1, ["cake", "parti"]);
    index.add(2, ["monica", "bring"]);
    index.add(3, ["weather"]);
    for (let key = 10; key < 30; key++) index.add(key, ["filler", `word${key}`]);
    const [alone, pair, unrelated, unknown] = index.windowScores(q("cake", "monica"), [
      [1],
      [1, 2],
      [3],
      [99],
    ]);
    expect(alone).toBeGreaterThan(0);
    expect(pair).toBeGreaterThan((alone as number) * 1.5);
    expect(unrelated).toBe(0);
    expect(unknown).toBe(0);
  });

  it("counts each passage of a window at its weight: a term in a down-weighted passage adds less", () => {
    const index = createLexicalIndex();
    index.add(1, ["cake", "parti"]);
    index.add(2, ["monica", "bring"]);
    for (let key = 10; key < 30; key++) index.add(key, ["filler", `word${key}`]);
    const [full, half, none] = index.windowScores(
      q("cake", "monica"),
      [
        [1, 2],
        [1, 2],
        [1, 2],
      ],
      [
        [1, 1],
        [1, 0.5],
        [1, 0],
      ],
    );
    const [alone] = index.windowScores(q("cake", "monica"), [[1]]);
    expect(half).toBeLessThan(full as number);
    expect(half).toBeGreaterThan(alone as number);
    expect(none).toBeCloseTo(alone as number, 10);
  });
});
