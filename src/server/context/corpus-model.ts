// The corpus embedder's model: an LSA space learned from the catalogue's own analysed chunk terms (vocabulary,
// global term weights, a term basis from a truncated SVD), its fold-in of passages and queries, and its bytes.
import { createHash } from "node:crypto";
import { IvoaiError } from "../../shared/errors.js";
import { type SparseColumns, truncatedSvd } from "./lsa.js";

export interface CorpusModelParams {
  dims: number;
  /** A term in fewer passages is not in the vocabulary. */
  min_df: number;
  /** A term in more than this share of passages is not either (it separates nothing). */
  max_df_ratio: number;
  weighting: "tfidf" | "log-entropy";
  /** Passage coordinates are Σ^(power−1)·Uᵀd: 1 weighs each axis by its singular value, 0 is the classic fold-in. */
  sigma_power: number;
  power_iterations: number;
  max_vocabulary: number;
}

export const DEFAULT_CORPUS_PARAMS: CorpusModelParams = {
  dims: 128,
  min_df: 1,
  max_df_ratio: 0.5,
  weighting: "tfidf",
  sigma_power: 1,
  power_iterations: 2,
  max_vocabulary: 60_000,
};

export interface CorpusModel {
  /** Content hash of the encoded model (part of the vector index name). */
  id: string;
  params: CorpusModelParams;
  /** Chunks the model was trained on (the retrain policy compares the catalogue's count with it). */
  trainedChunks: number;
  vocabulary: Map<string, number>;
  /** Global weight per vocabulary term. */
  weights: Float32Array;
  /** Row-major vocabulary × dims: the term basis with Σ^(power−1) folded in. */
  basis: Float32Array;
  dims: number;
}

/** Term frequencies of a space-joined analysed-terms string (the catalogue's chunk terms). */
export function termCounts(terms: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms.split(" ")) if (term) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** Trains a model on the passages' analysed terms (each a space-joined string); `trainedChunks` may exceed them (a sample). */
export function trainCorpusModel(
  passages: readonly string[],
  params: CorpusModelParams,
  trainedChunks = passages.length,
): CorpusModel {
  const counted = passages.map(termCounts);
  const df = new Map<string, number>();
  for (const counts of counted) for (const term of counts.keys()) df.set(term, (df.get(term) ?? 0) + 1);
  const n = Math.max(1, counted.length);
  const kept = [...df]
    .filter(
      ([, count]) => count >= params.min_df && count <= Math.max(params.min_df, params.max_df_ratio * n),
    )
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, params.max_vocabulary)
    .map(([term]) => term)
    .sort();
  const vocabulary = new Map(kept.map((term, index) => [term, index]));
  const weights = globalWeights(counted, vocabulary, params.weighting);
  const matrix = weightedMatrix(counted, vocabulary, weights);
  const svd = truncatedSvd(matrix, params.dims, {
    powerIterations: params.power_iterations,
    seed: 0x5eed ^ counted.length,
  });
  const dims = params.dims;
  // A corpus too small for `dims` axes leaves the rest zero: the vector length (and index name) stays the configured one.
  const basis = new Float32Array(vocabulary.size * dims);
  for (let t = 0; t < vocabulary.size; t++)
    for (let c = 0; c < svd.k; c++) {
      const sigma = svd.sigma[c] as number;
      const scale = sigma > 1e-9 ? sigma ** (params.sigma_power - 1) : 0;
      basis[t * dims + c] = (svd.u[t * svd.k + c] as number) * scale;
    }
  return withId({ id: "", params, trainedChunks, vocabulary, weights, basis, dims });
}

function globalWeights(
  counted: readonly Map<string, number>[],
  vocabulary: Map<string, number>,
  weighting: CorpusModelParams["weighting"],
): Float32Array {
  const n = Math.max(2, counted.length);
  const df = new Float64Array(vocabulary.size);
  const gf = new Float64Array(vocabulary.size);
  for (const counts of counted)
    for (const [term, tf] of counts) {
      const t = vocabulary.get(term);
      if (t === undefined) continue;
      df[t] = (df[t] as number) + 1;
      gf[t] = (gf[t] as number) + tf;
    }
  if (weighting === "tfidf") return Float32Array.from(df, (d) => Math.log(1 + n / Math.max(1, d)));
  // log-entropy: 1 + Σ p·log p / log n, p = tf / gf.
  const entropy = new Float64Array(vocabulary.size);
  for (const counts of counted)
    for (const [term, tf] of counts) {
      const t = vocabulary.get(term);
      if (t === undefined) continue;
      const p = tf / (gf[t] as number);
      entropy[t] = (entropy[t] as number) + p * Math.log(p);
    }
  return Float32Array.from(entropy, (e) => Math.max(1e-3, 1 + e / Math.log(n)));
}

function weightedMatrix(
  counted: readonly Map<string, number>[],
  vocabulary: Map<string, number>,
  weights: Float32Array,
): SparseColumns {
  const start = new Int32Array(counted.length + 1);
  const rowList: number[] = [];
  const valueList: number[] = [];
  for (const [j, counts] of counted.entries()) {
    for (const [term, tf] of counts) {
      const t = vocabulary.get(term);
      if (t === undefined) continue;
      rowList.push(t);
      valueList.push(Math.log(1 + tf) * (weights[t] as number));
    }
    start[j + 1] = rowList.length;
  }
  return {
    rows: Math.max(1, vocabulary.size),
    start,
    row: Int32Array.from(rowList),
    value: Float32Array.from(valueList),
  };
}

/** Folds weighted terms into the space (unit length; zero when no term is known). */
export function foldIn(model: CorpusModel, terms: Map<string, number>, local: "log" | "raw"): Float32Array {
  const ids: number[] = [];
  const weights: number[] = [];
  for (const [term, tf] of terms) {
    const t = model.vocabulary.get(term);
    if (t === undefined) continue;
    ids.push(t);
    weights.push((local === "log" ? Math.log(1 + tf) : tf) * (model.weights[t] as number));
  }
  return unit(sumRows(model, ids, weights), model.dims);
}

// Reused by foldInPassage: a term's count by vocabulary id, and the ids a passage touched.
let passageCounts = new Int32Array(0);

/**
 * foldIn(model, termCounts(terms), "log") without the Map: a passage's space-joined terms are looked up and
 * counted by vocabulary id (what ingest folds in for every chunk).
 */
export function foldInPassage(
  model: CorpusModel,
  terms: string,
  sum: RowSum = (ids, weights) => sumRows(model, ids, weights),
): Float32Array {
  if (passageCounts.length < model.vocabulary.size) passageCounts = new Int32Array(model.vocabulary.size);
  const counts = passageCounts;
  const touched: number[] = [];
  for (let start = 0; start < terms.length; ) {
    let end = terms.indexOf(" ", start);
    if (end < 0) end = terms.length;
    if (end > start) {
      const t = model.vocabulary.get(terms.slice(start, end));
      if (t !== undefined) {
        if (counts[t] === 0) touched.push(t);
        counts[t] = (counts[t] as number) + 1;
      }
    }
    start = end + 1;
  }
  const weights = touched.map((t) => {
    const tf = counts[t] as number;
    counts[t] = 0;
    return Math.log(1 + tf) * (model.weights[t] as number);
  });
  return unit(sum(touched, weights), model.dims);
}

/** Σ weights[i] × basis row ids[i] (dims floats; the WebAssembly one is vector-wasm.ts's wasmRowSum). */
export type RowSum = (ids: readonly number[], weights: readonly number[]) => Float32Array;

function sumRows(model: CorpusModel, ids: readonly number[], weights: readonly number[]): Float32Array {
  const { dims, basis } = model;
  const vector = new Float32Array(dims);
  for (let i = 0; i < ids.length; i++) {
    const w = weights[i] as number;
    const base = (ids[i] as number) * dims;
    for (let c = 0; c < dims; c++) vector[c] = (vector[c] as number) + w * (basis[base + c] as number);
  }
  return vector;
}

/** `vector`'s first dims values scaled to unit length (zero stays zero). */
function unit(vector: Float32Array, dims: number): Float32Array {
  let norm = 0;
  for (let c = 0; c < dims; c++) norm += (vector[c] as number) ** 2;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let c = 0; c < dims; c++) vector[c] = (vector[c] as number) * scale;
  }
  return vector;
}

const MAGIC = "ICM1";

// The bytes of models already encoded (training encodes a model for its id; saving it needs the same bytes).
const encodings = new WeakMap<CorpusModel, Buffer>();

/** The model's bytes: magic, header length, JSON header, vocabulary (\n-joined UTF-8), weights, basis (f32 LE). */
export function encodeCorpusModel(model: CorpusModel): Buffer {
  const known = encodings.get(model);
  if (known) return known;
  const terms = [...model.vocabulary.keys()];
  const header = Buffer.from(
    JSON.stringify({
      params: model.params,
      trainedChunks: model.trainedChunks,
      dims: model.dims,
      terms: terms.length,
    }),
  );
  const vocab = Buffer.from(terms.join("\n"));
  const floats = Buffer.alloc((model.weights.length + model.basis.length) * 4);
  for (const [i, value] of model.weights.entries()) floats.writeFloatLE(value, i * 4);
  const at = model.weights.length * 4;
  for (const [i, value] of model.basis.entries()) floats.writeFloatLE(value, at + i * 4);
  const lengths = Buffer.alloc(12);
  lengths.write(MAGIC, 0, "ascii");
  lengths.writeUInt32LE(header.length, 4);
  lengths.writeUInt32LE(vocab.length, 8);
  return Buffer.concat([lengths, header, vocab, floats]);
}

/** Largest dims a model may have (the settings' bound). */
const MAX_DIMS = 1024;

/**
 * A model from its bytes (a file beside the catalogue or a PostgreSQL row: read back, never trusted): a short,
 * damaged or foreign blob is refused with CONFIG_INVALID naming why, before anything is allocated from it.
 */
export function decodeCorpusModel(data: Buffer): CorpusModel {
  const bad = (why: string) => new IvoaiError("CONFIG_INVALID", `the corpus model is unreadable (${why})`);
  if (data.length < 12 || data.toString("ascii", 0, 4) !== MAGIC) throw bad("not a corpus model");
  const headerEnd = 12 + data.readUInt32LE(4);
  const vocabEnd = headerEnd + data.readUInt32LE(8);
  if (vocabEnd > data.length) throw bad("truncated");
  let header: { params: CorpusModelParams; trainedChunks: number; dims: number; terms: number };
  try {
    header = JSON.parse(data.toString("utf8", 12, headerEnd));
  } catch {
    throw bad("damaged header");
  }
  const count = (value: unknown, max: number) =>
    typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= max;
  if (
    typeof header !== "object" ||
    header === null ||
    typeof header.params !== "object" ||
    !count(header.dims, MAX_DIMS) ||
    header.dims === 0 ||
    !count(header.terms, data.length) ||
    !count(header.trainedChunks, Number.MAX_SAFE_INTEGER)
  )
    throw bad("damaged header");
  const terms = header.terms === 0 ? [] : data.toString("utf8", headerEnd, vocabEnd).split("\n");
  if (terms.length !== header.terms || data.length !== vocabEnd + terms.length * (1 + header.dims) * 4)
    throw bad("truncated");
  const weights = new Float32Array(terms.length);
  for (let i = 0; i < weights.length; i++) weights[i] = data.readFloatLE(vocabEnd + i * 4);
  const basis = new Float32Array(terms.length * header.dims);
  const at = vocabEnd + weights.length * 4;
  for (let i = 0; i < basis.length; i++) basis[i] = data.readFloatLE(at + i * 4);
  const model: CorpusModel = {
    id: corpusModelId(data),
    params: header.params,
    trainedChunks: header.trainedChunks,
    vocabulary: new Map(terms.map((term, index) => [term, index])),
    weights,
    basis,
    dims: header.dims,
  };
  return model;
}

export function corpusModelId(encoded: Buffer): string {
  return createHash("sha256").update(encoded).digest("hex").slice(0, 16);
}

function withId(model: CorpusModel): CorpusModel {
  // The id is not part of the bytes: the identified model encodes to what was hashed.
  const encoded = encodeCorpusModel(model);
  const identified = { ...model, id: corpusModelId(encoded) };
  encodings.set(identified, encoded);
  return identified;
}
