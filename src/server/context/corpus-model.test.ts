// The corpus model: what it learns from co-occurrence (a synonym pair the corpus teaches), and its bytes.
import { describe, expect, it } from "vitest";
import {
  DEFAULT_CORPUS_PARAMS,
  decodeCorpusModel,
  encodeCorpusModel,
  foldIn,
  foldInPassage,
  termCounts,
  trainCorpusModel,
} from "./corpus-model.js";

/** "car" and "automobil" never meet, but both go with "engin" and "wheel"; "vacat" lives elsewhere. */
const PASSAGES = [
  "car engin wheel garag",
  "car wheel tyre engin",
  "automobil engin wheel",
  "automobil tyre wheel garag",
  "vacat holiday beach leav",
  "vacat leav request holiday",
  "invoic bill payment financ",
  "invoic payment financ bill",
];
const PARAMS = { ...DEFAULT_CORPUS_PARAMS, dims: 3, min_df: 1, max_df_ratio: 1 };

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);

describe("corpus model", () => {
  it("places a query word near passages that use its synonym only", () => {
    const model = trainCorpusModel(PASSAGES, PARAMS);
    const query = foldIn(model, new Map([["automobil", 1]]), "raw");
    const carOnly = foldIn(model, termCounts("car garag car"), "log");
    const holiday = foldIn(model, termCounts("vacat holiday"), "log");
    expect(dot(query, carOnly)).toBeGreaterThan(0.8);
    expect(dot(query, holiday)).toBeLessThan(0.2);
  });

  it("folds a passage's terms in as foldIn of their counts does, unknown and repeated terms included", () => {
    const model = trainCorpusModel(PASSAGES, PARAMS);
    for (const passage of ["car car engin  wheel", "unknown words only", "", "vacat leav vacat garag tyre"])
      expect(Array.from(foldInPassage(model, passage))).toEqual(
        Array.from(foldIn(model, termCounts(passage), "log")),
      );
    expect(Array.from(foldInPassage(model, "nothing known"))).toEqual([0, 0, 0]);
  });

  it("is the same model after encoding and decoding, its id a hash of its bytes", () => {
    const model = trainCorpusModel(PASSAGES, PARAMS, 12);
    const again = decodeCorpusModel(encodeCorpusModel(model));
    expect(again.id).toBe(model.id);
    expect(again.trainedChunks).toBe(12);
    expect([...again.vocabulary]).toEqual([...model.vocabulary]);
    expect(again.basis).toEqual(model.basis);
    expect(again.weights).toEqual(model.weights);
    // Same corpus, same model (seeded); another corpus, another id.
    expect(trainCorpusModel(PASSAGES, PARAMS, 12).id).toBe(model.id);
    expect(trainCorpusModel([...PASSAGES, "car automobil"], PARAMS).id).not.toBe(model.id);
  });

  it("refuses bytes that are not a whole model", () => {
    const bytes = encodeCorpusModel(trainCorpusModel(PASSAGES, PARAMS));
    expect(() => decodeCorpusModel(bytes.subarray(0, bytes.length - 4))).toThrow(
      /corpus model is unreadable/,
    );
  });

  it("refuses a damaged or hostile header before allocating anything from it", () => {
    const withHeader = (header: string, vocabLength = 0) => {
      const json = Buffer.from(header);
      const lengths = Buffer.alloc(12);
      lengths.write("ICM1", 0, "ascii");
      lengths.writeUInt32LE(json.length, 4);
      lengths.writeUInt32LE(vocabLength, 8);
      return Buffer.concat([lengths, json]);
    };
    const refused = (bytes: Buffer, why: string) =>
      expect(() => decodeCorpusModel(bytes)).toThrow(`the corpus model is unreadable (${why})`);
    refused(Buffer.from("not a model at all"), "not a corpus model");
    refused(withHeader("{not json"), "damaged header");
    refused(withHeader("null"), "damaged header");
    // Dims or a term count that would allocate gigabytes, negative or fractional counts.
    refused(withHeader('{"params":{},"trainedChunks":1,"dims":1000000000,"terms":0}'), "damaged header");
    refused(withHeader('{"params":{},"trainedChunks":1,"dims":8,"terms":4000000000}'), "damaged header");
    refused(withHeader('{"params":{},"trainedChunks":-1,"dims":8,"terms":0}'), "damaged header");
    refused(withHeader('{"params":{},"trainedChunks":1,"dims":8.5,"terms":0}'), "damaged header");
    // A vocabulary said to run past the end of the bytes.
    refused(withHeader('{"params":{},"trainedChunks":1,"dims":8,"terms":0}', 1 << 30), "truncated");
  });
});
