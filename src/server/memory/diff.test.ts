// The approver's diff: every line of both bodies, numbered on each side, aligned when it can be and shown
// whole (removed, then added) when the bodies are too far apart to align within the budget.
import { describe, expect, it } from "vitest";
import { diffLines } from "./diff.js";

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}`).join("\n");

describe("diffLines", () => {
  it("aligns an edit inside a long page and numbers both sides", () => {
    const before = lines(5000, "line");
    const after = before.replace("line 2500\n", "line 2500 edited\nline new\n");
    const diff = diffLines(before, after);
    expect(diff).toMatchObject({ added: 2, removed: 1, coarse: false });
    expect(diff.lines).toHaveLength(5002);
    expect(diff.lines.filter((line) => line.op !== "=")).toEqual([
      { op: "-", old: 2501, new: null, text: "line 2500" },
      { op: "+", old: null, new: 2501, text: "line 2500 edited" },
      { op: "+", old: null, new: 2502, text: "line new" },
    ]);
    expect(diff.lines.at(-1)).toEqual({ op: "=", old: 5000, new: 5001, text: "line 4999" });
  });

  it("finds the shortest script between interleaved changes", () => {
    const diff = diffLines("a\nb\nc\nd\ne", "a\nc\nd\nx\ne\nf");
    expect(diff.lines.map((line) => `${line.op}${line.text}`)).toEqual([
      "=a",
      "-b",
      "=c",
      "=d",
      "+x",
      "=e",
      "+f",
    ]);
  });

  it("shows bodies too far apart whole: kept ends, then every old line removed and every new one added", () => {
    const diff = diffLines(`top\n${lines(300, "old")}\nend`, `top\n${lines(300, "new")}\nend`, 100);
    expect(diff.coarse).toBe(true);
    expect(diff).toMatchObject({ added: 300, removed: 300 });
    expect(diff.lines[0]).toEqual({ op: "=", old: 1, new: 1, text: "top" });
    expect(diff.lines[1]).toEqual({ op: "-", old: 2, new: null, text: "old 0" });
    expect(diff.lines[301]).toEqual({ op: "+", old: null, new: 2, text: "new 0" });
    expect(diff.lines.at(-1)).toEqual({ op: "=", old: 302, new: 302, text: "end" });
  });

  it("has no lines for two empty bodies, and every line added for a new page", () => {
    expect(diffLines("", "")).toEqual({ added: 0, removed: 0, lines: [], coarse: false });
    expect(diffLines("", "a\nb").lines).toEqual([
      { op: "+", old: null, new: 1, text: "a" },
      { op: "+", old: null, new: 2, text: "b" },
    ]);
  });
});
