// Word marks inside changed lines: what is marked, the bound on the work for long lines, and split-view pairing.
import { describe, expect, it } from "vitest";
import { pairRows, wordDiff } from "./diff-words.js";

describe("wordDiff", () => {
  it("marks only the words that differ, on each side", () => {
    const result = wordDiff(
      "We deploy on Tuesdays after standup.",
      "We deploy on Wednesdays after the standup.",
    );
    expect(result?.old.filter((s) => s.changed).map((s) => s.text)).toEqual(["Tuesdays"]);
    expect(result?.new.filter((s) => s.changed).map((s) => s.text)).toEqual(["Wednesdays", "the "]);
    expect(result?.old.map((s) => s.text).join("")).toBe("We deploy on Tuesdays after standup.");
  });

  it("marks nothing when the lines share too little to help", () => {
    expect(wordDiff("alpha beta gamma", "one two three")).toBeNull();
  });

  it("leaves long lines unmarked instead of spending quadratic work on them", () => {
    const long = "word ".repeat(20_000);
    const started = process.cpuUsage();
    expect(wordDiff(long, `${long}x`)).toBeNull();
    const used = process.cpuUsage(started);
    // The refusal is a size check, not an LCS over 40,000 × 40,000 tokens.
    expect(used.user + used.system).toBeLessThan(2_000_000);
  });
});

describe("pairRows", () => {
  it("puts each removed line beside the added line that replaces it, kept lines on both sides", () => {
    const rows = pairRows([
      { op: "=", old: 1, new: 1, text: "a" },
      { op: "-", old: 2, new: null, text: "b" },
      { op: "-", old: 3, new: null, text: "c" },
      { op: "+", old: null, new: 2, text: "B" },
      { op: "+", old: null, new: 3, text: "C" },
      { op: "+", old: null, new: 4, text: "D" },
      { op: "=", old: 4, new: 5, text: "e" },
    ]);
    expect(rows).toEqual([
      { left: 0, right: 0 },
      { left: 1, right: 3 },
      { left: 2, right: 4 },
      { left: null, right: 5 },
      { left: 6, right: 6 },
    ]);
  });
});
