import { describe, expect, it } from "vitest";
import { analyzeQuery, analyzeWithOffsets, detectLanguage, foldDiacritics, words } from "./analyzer.js";

describe("analyzer", () => {
  it("folds diacritics and stems Portuguese so accented and plain spellings meet", () => {
    const doc = analyzeWithOffsets("A implantação dos serviços de cobrança nas universidades públicas");
    expect(doc.language).toBe("pt");
    // A Portuguese-only index: an undecided query is stemmed as Portuguese.
    const query = [...analyzeQuery("implantacao servico universidade publica", ["pt"]).keys()];
    expect(query).toHaveLength(4);
    for (const term of query) expect(doc.terms).toContain(term);
    expect(foldDiacritics("ação")).toBe("acao");
  });

  it("stems English and drops stopwords, with offsets into the original text", () => {
    const text = "The engineers were deploying the billing services";
    const doc = analyzeWithOffsets(text);
    expect(doc.language).toBe("en");
    expect(doc.terms).toEqual(["engin", "deploy", "bill", "servic"]);
    const at = doc.offsets[1] ?? -1;
    expect(text.slice(at, at + 9)).toBe("deploying");
  });

  it("stems an undecided query in every language, sharing each word's weight", () => {
    const weights = analyzeQuery("cobrança");
    expect([...weights.values()].reduce((sum, weight) => sum + weight, 0)).toBeCloseTo(1);
    expect(detectLanguage(words("o que é"))).toBe("pt");
    expect(detectLanguage(words("what is"))).toBe("en");
    expect(detectLanguage(words("kubernetes"))).toBeUndefined();
  });

  it("tokenises letters and digits of any script, including astral code points", () => {
    const doc = analyzeWithOffsets("naïve café 𝔘𝔫𝔦 2026", "en");
    expect(doc.terms).toContain("naiv");
    expect(doc.terms).toContain("2026");
    expect(doc.terms.some((term) => term.includes("𝔘"))).toBe(true);
  });
});
