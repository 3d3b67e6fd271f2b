// provider = "onnx": an operator-supplied model run in process by onnxruntime-node, after its files were checked
// against their pins. Texts get the configured prefixes, are tokenized here, mean-pooled over the attention mask and
// L2-normalised. onnxruntime-node is an optional package, loaded only when this provider is configured.
import type * as Ort from "onnxruntime-node";
import { IvoaiError } from "../../../shared/errors.js";
import type { Embedder, EmbeddingKind } from "../embedder.js";
import { onnxFingerprint, readPinnedModelFiles } from "./model-files.js";
import { parseTokenizer, type Tokenizer } from "./tokenizer.js";

/** The onnxruntime-node release ivoai is tested with (package.json pins it). */
export const ONNXRUNTIME_VERSION = "1.31.1";

export interface OnnxEmbedderConfig {
  model_dir: string;
  model: string;
  model_file: string;
  sha256: Record<string, string>;
  dims: number;
  max_length: number;
  query_prefix: string;
  passage_prefix: string;
  batch_size: number;
  threads: number;
}

export interface OnnxEmbedderDeps {
  /** Default: import("onnxruntime-node"). */
  loadRuntime?: () => Promise<typeof Ort>;
}

/** onnxruntime-node, or a NATIVE_MODULE error saying how to install the release ivoai is tested with. */
export async function importOnnxRuntime(): Promise<typeof Ort> {
  const specifier = "onnxruntime-node";
  try {
    return (await import(specifier)) as typeof Ort;
  } catch (error) {
    throw new IvoaiError(
      "NATIVE_MODULE",
      `provider "onnx" needs the optional package onnxruntime-node@${ONNXRUNTIME_VERSION}: install it where ivoai is installed (npm install -g onnxruntime-node@${ONNXRUNTIME_VERSION} beside a global ivoai)`,
      { cause: error },
    );
  }
}

interface Loaded {
  ort: typeof Ort;
  session: Ort.InferenceSession;
  tokenizer: Tokenizer;
  output: string;
  inputs: string[];
}

const FED = new Set(["input_ids", "attention_mask", "token_type_ids"]);

async function load(config: OnnxEmbedderConfig, deps: OnnxEmbedderDeps): Promise<Loaded> {
  const files = await readPinnedModelFiles({
    modelDir: config.model_dir,
    modelFile: config.model_file,
    pins: config.sha256,
  });
  const tokenizer = parseTokenizer(files.tokenizer);
  const ort = await (deps.loadRuntime ?? importOnnxRuntime)();
  let session: Ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(files.model, {
      executionProviders: ["cpu"],
      graphOptimizationLevel: "all",
      interOpNumThreads: 1,
      ...(config.threads > 0 ? { intraOpNumThreads: config.threads } : {}),
      logSeverityLevel: 3,
    });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0];
    throw new IvoaiError(
      "CONFIG_INVALID",
      `the embedding model ${config.model_file} does not load: ${reason}`,
      {
        cause: error,
      },
    );
  }
  const inputs = [...session.inputNames];
  const strange = inputs.find((name) => !FED.has(name));
  if (!inputs.includes("input_ids") || strange) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      `the embedding model ${config.model_file} takes inputs ${inputs.join(", ")}; ivoai feeds input_ids, attention_mask and token_type_ids`,
    );
  }
  const names = session.outputNames;
  const output = ["last_hidden_state", "sentence_embedding"].find((name) => names.includes(name)) ?? names[0];
  if (!output)
    throw new IvoaiError("CONFIG_INVALID", `the embedding model ${config.model_file} has no output`);
  return { ort, session, tokenizer, output, inputs };
}

/** Mean over the positions the attention mask keeps ([batch, seq, dims]), or the pooled output as is ([batch, dims]). */
function pool(tensor: Ort.Tensor, masks: number[][], expected: number, file: string): Float32Array[] {
  const data = tensor.data as Float32Array;
  const dims = Number(tensor.dims.at(-1));
  if (tensor.type !== "float32" || (tensor.dims.length !== 3 && tensor.dims.length !== 2)) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      `the embedding model ${file} does not output float32 [batch, (sequence,) dims]`,
    );
  }
  if (dims !== expected) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      `the embedding model ${file} outputs ${dims}-dimensional vectors; context.embedder.dims is ${expected}`,
    );
  }
  const sequence = tensor.dims.length === 3 ? Number(tensor.dims[1]) : 1;
  return masks.map((mask, row) => {
    const vector = new Float32Array(dims);
    let kept = 0;
    for (let position = 0; position < sequence; position++) {
      if (tensor.dims.length === 3 && !mask[position]) continue;
      kept++;
      const base = (row * sequence + position) * dims;
      for (let d = 0; d < dims; d++) vector[d] = (vector[d] as number) + (data[base + d] as number);
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += (vector[d] as number) ** 2;
    const scale = kept > 0 && norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let d = 0; d < dims; d++) vector[d] = (vector[d] as number) * scale;
    return vector;
  });
}

export interface OnnxEmbedder extends Embedder {
  /** Verifies the pinned files, loads the model and checks its output size (what a server start waits for). */
  ready(): Promise<void>;
}

export function createOnnxEmbedder(config: OnnxEmbedderConfig, deps: OnnxEmbedderDeps = {}): OnnxEmbedder {
  let loading: Promise<Loaded> | undefined;
  const loaded = () => {
    loading ??= load(config, deps).catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };

  const run = async (model: Loaded, texts: readonly string[], kind: EmbeddingKind) => {
    const prefix = kind === "query" ? config.query_prefix : config.passage_prefix;
    const encoded = texts.map((text) => model.tokenizer.encode(prefix + text, config.max_length));
    const width = Math.max(1, ...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(encoded.length * width).fill(BigInt(model.tokenizer.padId));
    const mask = new BigInt64Array(encoded.length * width);
    const masks = encoded.map((row, index) => {
      row.forEach((id, position) => {
        ids[index * width + position] = BigInt(id);
        mask[index * width + position] = 1n;
      });
      return Array.from({ length: width }, (_, position) => (position < row.length ? 1 : 0));
    });
    const shape = [encoded.length, width];
    const feeds: Record<string, Ort.Tensor> = {};
    for (const name of model.inputs) {
      const data =
        name === "input_ids" ? ids : name === "attention_mask" ? mask : new BigInt64Array(ids.length);
      feeds[name] = new model.ort.Tensor("int64", data, shape);
    }
    const result = await model.session.run(feeds, [model.output]);
    return pool(result[model.output] as Ort.Tensor, masks, config.dims, config.model_file);
  };

  return {
    model: config.model,
    dims: config.dims,
    fingerprint: onnxFingerprint({
      pins: config.sha256,
      modelFile: config.model_file,
      queryPrefix: config.query_prefix,
      passagePrefix: config.passage_prefix,
      maxLength: config.max_length,
    }),
    async ready() {
      const model = await loaded();
      await run(model, ["ivoai"], "query");
    },
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      const model = await loaded();
      const vectors: Float32Array[] = [];
      for (let from = 0; from < texts.length; from += config.batch_size) {
        vectors.push(...(await run(model, texts.slice(from, from + config.batch_size), kind)));
      }
      return vectors;
    },
  };
}
