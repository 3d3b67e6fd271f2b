import { describe, expect, it } from "vitest";
import { foldDiacritics } from "./analyzer.js";
import { makeSnippet } from "./snippet.js";

describe("snippets", () => {
  it("centre on the first query word, found with diacritics folded in text that has them", () => {
    const filler = "palavra ".repeat(60);
    const text = `${filler}A Ação do Governo começou cedo. ${filler}`;
    const snippet = makeSnippet(text, ["acao"], 100);
    expect(snippet.startsWith("… ")).toBe(true);
    expect(snippet).toContain("A Ação do Governo");
  });

  it("read ASCII text as the fold would (nothing to fold)", () => {
    const text = `${"word ".repeat(80)}Budget planning\tfor the\nnext quarter. ${"tail ".repeat(80)}`;
    expect(foldDiacritics(text.toLowerCase())).toBe(text.toLowerCase());
    const snippet = makeSnippet(text, ["planning"], 100);
    expect(snippet).toContain("Budget planning for the next quarter.");
    expect(makeSnippet(text, ["absent"], 100).startsWith("word word")).toBe(true);
  });
});
