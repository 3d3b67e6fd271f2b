import { describe, expect, it } from "vitest";
import { precompiledCharsmap, unigramTokenizerJson, wordPieceTokenizerJson } from "./onnx.test-kit.js";
import { precompiledNormalizer } from "./text-steps.js";
import { parseTokenizer } from "./tokenizer.js";

describe("the Unigram (XLM-R / SentencePiece) tokenizer", () => {
  const tokenizer = parseTokenizer(unigramTokenizerJson());

  it("gives the ids computed by hand: Metaspace words, the best-scoring segmentation, <s> … </s>", () => {
    expect(tokenizer.kind).toBe("unigram");
    // ▁hello (-5) beats ▁he + llo (-6); ▁world is one piece.
    expect(tokenizer.encode("hello world", 512)).toEqual([0, 5, 8, 2]);
    // Viterbi, not greedy: ▁ab + c (-2) beats the longer ▁abc (-10).
    expect(tokenizer.encode("abc", 512)).toEqual([0, 14, 16, 2]);
  });

  it("normalizes through the precompiled charsmap and collapses runs of spaces", () => {
    // Ｗ → W (the charsmap), three spaces → one (Replace), ﬁ → fi.
    expect(tokenizer.encode("hello   Ｗorld", 512)).toEqual([0, 5, 4, 24, 10, 11, 12, 13, 2]);
    expect(tokenizer.encode("ﬁ", 512)).toEqual([0, 4, 17, 2]);
  });

  it("fuses neighbouring unknown characters into one <unk>, and never reads <s> in a text as a control token", () => {
    expect(tokenizer.encode("helloЖЖ", 512)).toEqual([0, 5, 3, 2]);
    expect(tokenizer.encode("<s>", 512)).toEqual([0, 4, 3, 2]);
  });

  it("truncates to the maximum length, special tokens included", () => {
    expect(tokenizer.encode("hello world hello world", 3)).toEqual([0, 5, 2]);
    expect(tokenizer.encode("", 512)).toEqual([0, 2]);
  });
});

describe("the BERT WordPiece tokenizer", () => {
  const tokenizer = parseTokenizer(wordPieceTokenizerJson());

  it("gives the ids computed by hand: lowercase, accents stripped, punctuation split, ## continuations", () => {
    expect(tokenizer.kind).toBe("wordpiece");
    expect(tokenizer.encode("Hello, World!", 512)).toEqual([2, 4, 9, 5, 10, 3]);
    expect(tokenizer.encode("unaffable", 512)).toEqual([2, 6, 7, 8, 3]);
    expect(tokenizer.encode("Café\tdu\u0000中", 512)).toEqual([2, 11, 1, 12, 3]);
  });

  it("makes a word it cannot cover one [UNK], and truncates", () => {
    expect(tokenizer.encode("unknownword", 512)).toEqual([2, 1, 3]);
    expect(tokenizer.encode("hello world hello", 4)).toEqual([2, 4, 5, 3]);
  });
});

describe("tokenizer.json files ivoai does not run", () => {
  it("refuses an unknown model type, normalizer or pre-tokenizer with the file and the type named", () => {
    const bpe = JSON.stringify({ model: { type: "BPE", vocab: {}, merges: [] } });
    expect(() => parseTokenizer(bpe)).toThrow(
      'tokenizer.json: model type "BPE" is not supported (Unigram, WordPiece)',
    );
    const json = JSON.parse(wordPieceTokenizerJson());
    expect(() => parseTokenizer(JSON.stringify({ ...json, pre_tokenizer: { type: "ByteLevel" } }))).toThrow(
      'pre_tokenizer type "ByteLevel" is not supported',
    );
    expect(() => parseTokenizer(JSON.stringify({ ...json, normalizer: { type: "Nmt" } }))).toThrow(
      'normalizer type "Nmt" is not supported',
    );
    expect(() => parseTokenizer("{not json")).toThrow("tokenizer.json is not JSON");
  });
});

describe("the precompiled charsmap", () => {
  it("rewrites the longest key at each position and copies everything else", () => {
    const normalize = precompiledNormalizer(precompiledCharsmap({ a: "1", ab: "2", é: "e" }), "t.json");
    expect(normalize("abaxé")).toBe("21xe");
    expect(() => precompiledNormalizer("AAAA", "t.json")).toThrow(
      "t.json: the precompiled_charsmap does not parse",
    );
  });
});
