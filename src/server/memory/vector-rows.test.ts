// A scope's vector rows through appends and removals: whether a search repacks or scores a tail and skips
// tombstones, it returns what an exact scan of the live rows returns.
import { describe, expect, it } from "vitest";
import { normalize } from "../context/embedder.js";
import { gaussian } from "../context/lsa.js";
import { VectorRows } from "./vector-rows.js";

describe("memory's vector rows", () => {
  it("search the live rows exactly, through tails, tombstones and repacks", () => {
    const random = gaussian(17);
    const dims = 12;
    const rows = new VectorRows(dims, "float32");
    const live = new Map<number, Float32Array>();
    let key = 0;
    const add = (count: number) => {
      for (let i = 0; i < count; i++) {
        key += 1 + (i % 3);
        const vector = normalize(Float32Array.from({ length: dims }, () => random()));
        rows.append(key, vector);
        live.set(key, vector);
      }
    };
    const exact = (query: Float32Array, limit: number) =>
      [...live]
        .map(([k, vector]) => ({
          key: k,
          score: vector.reduce((sum, x, d) => sum + x * (query[d] as number), 0),
        }))
        .sort((a, b) => b.score - a.score || a.key - b.key)
        .slice(0, limit)
        .map((hit) => hit.key);
    const check = () => {
      const query = normalize(Float32Array.from({ length: dims }, () => random()));
      for (const limit of [1, 10, 60])
        expect(rows.search(query, limit).map((hit) => hit.key)).toEqual(exact(query, limit));
    };

    add(3000);
    check(); // the first search packs every row
    add(40); // a tail scored beside the packed rows
    check();
    const gone = new Set([...live.keys()].filter((_, i) => i % 7 === 0).slice(0, 100));
    expect(rows.remove(gone)).toBe(gone.size);
    expect(rows.remove(gone)).toBe(0);
    for (const k of gone) live.delete(k);
    check(); // tombstones among packed rows and in the tail
    expect(rows.size).toBe(live.size);
    add(900); // past the tail's bound: repacked, tombstones compacted
    check();
    const many = new Set([...live.keys()].slice(0, 400));
    rows.remove(many);
    for (const k of many) live.delete(k);
    add(5);
    check();
    expect(rows.size).toBe(live.size);
  });
});
