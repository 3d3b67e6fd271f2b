import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createRandom } from "../../../bench/lib/corpus.js";
import { cpuMs } from "../../../test/cpu-time.js";
import { DEMO_CORPUS } from "../../cli/commands/demo-corpus.js";
import { planChunks } from "../context/ingest-prepare.js";
import { analyzeWithOffsets, joinedTermsBetween } from "./analyzer.js";
import { chunkTerms } from "./term-scanner.js";

// Pieces whose terms stay within Latin-1 (the module's own path), then pieces that need the JavaScript analyser.
const LATIN = [
  "the",
  "The",
  "and",
  "of",
  "de",
  "que",
  "não",
  "Ação",
  "implantação",
  "implantacao",
  "running",
  "runs",
  "ÉCOLE",
  "über",
  "naïve",
  "café",
  "İstanbul",
  "Straße",
  "x86_64",
  "v1.2.3",
  "e-mail",
  "don't",
  "'",
  "-",
  "—",
  "\u0301",
  "e\u0301",
  "\u00a0",
  "\u200b",
  "1234567890",
  "a".repeat(40),
  "b".repeat(41),
  "ç".repeat(45),
  "\n",
  "\n\n",
  "\t",
  "  ",
  ".",
  ",",
  "!?",
  "#",
  "##",
  "```",
  "§",
  "€",
  "\u2028",
  "“quoted”",
  "²³",
  "½",
];
const WIDE = ["ﬁle", "Σίσυφος", "Ωμέγα", "日本語", "東京", "١٢٣", "ǅemal", "ǈ", "ﬀ", "Ⅻ", "ⅻ"];
const PIECES = [...LATIN, ...WIDE];

function randomText(next: () => number, words: number, pieces = LATIN): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) {
    parts.push(pieces[Math.floor(next() * pieces.length)] as string);
    parts.push(next() < 0.8 ? " " : "");
  }
  return parts.join("");
}

describe("chunkTerms (WebAssembly) against the JavaScript analyser", () => {
  it("gives the same plan for random texts in both languages, with headers and overlapping chunks", () => {
    let own = 0;
    // 120 texts: enough that every piece meets every other at a chunk edge; more only slows the unit loop.
    for (let seed = 1; seed <= 120; seed++) {
      const next = createRandom(seed);
      // Every fourth text may hold pieces whose terms leave Latin-1: those go to the JavaScript analyser.
      const pieces = seed % 4 === 0 ? PIECES : LATIN;
      const input = {
        id: `doc-${seed}`,
        title: randomText(next, 1 + Math.floor(next() * 6), pieces),
        text: randomText(next, Math.floor(next() * 1500), pieces),
      };
      const fast = planChunks(input, "wasm");
      const reference = planChunks(input, "js");
      expect({ seed, ...fast }).toEqual({ seed, ...reference });
      const bounds = fast.bounds;
      if (chunkTerms(input.text, bounds, () => "") !== undefined) own += 1;
    }
    // The Latin-1 texts took the module's own path.
    expect(own).toBeGreaterThanOrEqual(85);
  });

  it("gives the same plan for real text: the demo corpus, the README and ivoai's own sources", () => {
    const files = [
      "README.md",
      ...readdirSync("src", { recursive: true })
        .map(String)
        .filter((name) => name.endsWith(".ts"))
        // Every third source (sorted, so the same ones each run): the sources are alike, and all of them took 5 s.
        .sort()
        .filter((_, index) => index % 3 === 0)
        .map((name) => path.join("src", name)),
    ];
    const inputs = [
      ...Object.entries(DEMO_CORPUS).map(([name, text]) => ({ id: name, title: name, text })),
      ...files.map((file) => ({ id: file, title: path.basename(file), text: readFileSync(file, "utf8") })),
    ];
    let own = 0;
    for (const input of inputs) {
      const fast = planChunks(input, "wasm");
      expect(fast).toEqual(planChunks(input, "js"));
      if (chunkTerms(input.text, fast.bounds, () => "") !== undefined) own += 1;
    }
    expect(inputs.length).toBeGreaterThan(100);
    expect(own / inputs.length).toBeGreaterThan(0.9);
  });

  it("starts its lexicon afresh when it would pass its limit, with the same terms", () => {
    const next = createRandom(99);
    for (let round = 0; round < 20; round++) {
      // A new text each round, so that nothing of the previous scan can stand in for this one.
      const text = randomText(next, 400);
      const bounds = new Int32Array([
        0,
        Math.floor(text.length / 2),
        Math.floor(text.length / 3),
        text.length,
      ]);
      const analysed = analyzeWithOffsets(text);
      const own = [0, 1].map((chunk) =>
        joinedTermsBetween(analysed, bounds[chunk * 2] as number, bounds[chunk * 2 + 1] as number),
      );
      const fast = chunkTerms(text, bounds, () => "", undefined, 500 + round);
      expect(fast?.language).toBe(analysed.language);
      expect(fast?.terms).toBe(own.join(""));
      expect(Array.from(fast?.termEnds ?? [])).toEqual([
        own[0]?.length,
        (own[0]?.length ?? 0) + (own[1]?.length ?? 0),
      ]);
    }
  });

  // A quadratic step on 1 MiB takes minutes; linear work here takes tens of milliseconds.
  it("takes hostile documents in linear time with the analyser's terms: a 1 MiB word, 50,000 distinct words, long words", () => {
    const distinct = Array.from({ length: 50_000 }, (_, i) => `w${i.toString(36)}`).join(" ");
    const hostile = [
      "a".repeat(1024 * 1024),
      distinct,
      Array.from({ length: 5_000 }, (_, i) => `${"x".repeat(41)}${i} ${"é".repeat(40)}`).join(" "),
      " ".repeat(256 * 1024),
    ];
    for (const text of hostile) {
      const bounds = new Int32Array([
        0,
        Math.floor(text.length / 2),
        Math.floor(text.length / 3),
        text.length,
      ]);
      let fast: ReturnType<typeof chunkTerms> | undefined;
      expect(cpuMs(() => (fast = chunkTerms(text, bounds, () => "title")), 1)).toBeLessThan(2_000);
      const analysed = analyzeWithOffsets(text);
      const own = [0, 1].map((chunk) =>
        joinedTermsBetween(analysed, bounds[chunk * 2] as number, bounds[chunk * 2 + 1] as number),
      );
      expect(fast?.terms).toBe(own.map((terms) => (terms ? `title ${terms}` : "")).join(""));
    }
  }, 60_000);

  it("leaves texts with surrogate pairs to the JavaScript analyser, which handles them", () => {
    const text = "emoji 😀 and 𝒳 letters";
    expect(chunkTerms(text, new Int32Array([0, text.length]), () => "")).toBeUndefined();
    expect(planChunks({ id: "d", title: "t", text }).count).toBe(1);
  });

  it("gives the stated language, and keeps a word's terms apart per language", () => {
    const text = "Os dados de implantação foram running the tests";
    const bounds = new Int32Array([0, text.length]);
    const en = chunkTerms(text, bounds, () => "", "en");
    const pt = chunkTerms(text, bounds, () => "", "pt");
    expect(en?.language).toBe("en");
    expect(pt?.language).toBe("pt");
    expect(en?.terms).not.toBe(pt?.terms);
    expect(chunkTerms(text, bounds, () => "", "en")).toEqual(en);
  });
});
