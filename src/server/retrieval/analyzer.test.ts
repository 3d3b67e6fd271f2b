import { describe, expect, it } from "vitest";
import {
  analyzeQuery,
  analyzeWithOffsets,
  detectLanguage,
  FNV_OFFSET,
  FNV_PRIME,
  foldDiacritics,
  Lexicon,
  words,
} from "./analyzer.js";

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

describe("analyzeWithOffsets", () => {
  it("decides the language on the first 500 words, long words included, English when even", () => {
    const english = "the cat and the dog ".repeat(100); // 500 words, 300 English stopwords
    const portuguese = "o gato e o cão de uma casa ".repeat(200);
    expect(analyzeWithOffsets(`${english}${portuguese}`).language).toBe("en");
    // A word longer than 40 characters is no term, but it takes a place in the sample.
    const long = `${"x".repeat(41)} `.repeat(500);
    expect(analyzeWithOffsets(`${long}${portuguese}`).language).toBe("en");
    expect(analyzeWithOffsets(`${long.slice(0, 42 * 499)}${portuguese}`).language).toBe("pt");
    const doc = analyzeWithOffsets(`${portuguese}${english}`);
    expect(doc.language).toBe("pt");
    expect(doc.terms).toContain("cat");
  });

  it("gives the same terms as word-by-word stemming, across repeats and case", () => {
    const text = "Deploying DEPLOYED deploys; Implantação implantacao 2026 naïve Naïve";
    for (const language of ["en", "pt"] as const) {
      const expected = words(text).flatMap((word) => [...analyzeQuery(word, [language]).keys()]);
      expect(analyzeWithOffsets(text, language).terms).toEqual(expected);
    }
  });
});

describe("Lexicon", () => {
  it("starts afresh at its limit and still finds every word exactly", () => {
    const lexicon = new Lexicon(50);
    const text = Array.from({ length: 400 }, (_, i) => `w${i}x`).join(" ");
    const entryOf = (word: string) => {
      const start = text.indexOf(`${word} `);
      let hash = FNV_OFFSET;
      for (let i = start; i < start + word.length; i++)
        hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
      return lexicon.find(text, start, start + word.length, hash);
    };
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < 399; i += 7) {
        const entry = entryOf(`w${i}x`);
        expect(entry).toBeLessThan(50);
        expect(lexicon.term(entry, "en")).toBe(`w${i}x`);
        expect(entryOf(`w${i}x`)).toBe(entry);
      }
  });
});
