// The Embedder seam: none (lexical only, the default), tei (HTTP, the seed's TEI service) or local
// (in-process ONNX from a local model directory, remote loading off). E5 prefixes are applied here, once.
import { IvoaiError } from "../../shared/errors.js";

export type EmbeddingKind = "query" | "passage";

export interface Embedder {
  /** Model name as configured (part of the vector index name). */
  model: string;
  dims: number;
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
}

export type EmbedderConfig =
  | { provider: "none" }
  | { provider: "tei"; url: string; model: string; dims: number; timeout_ms?: number }
  | { provider: "local"; model_dir: string; model: string; dims: number };

/** E5 models are trained with these prefixes; every provider goes through this. */
export function e5Prefix(text: string, kind: EmbeddingKind): string {
  return `${kind}: ${text}`;
}

export function createEmbedder(config: EmbedderConfig): Embedder | undefined {
  switch (config.provider) {
    case "none":
      return undefined;
    case "tei":
      return createTeiEmbedder(config);
    case "local":
      return createLocalEmbedder(config);
  }
}

function checkVectors(vectors: unknown, count: number, dims: number, source: string): Float32Array[] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    throw new IvoaiError(
      "NETWORK",
      `${source} returned ${Array.isArray(vectors) ? vectors.length : "no"} vectors for ${count} inputs`,
    );
  }
  return vectors.map((vector) => {
    if (!Array.isArray(vector) || vector.length !== dims || !vector.every((x) => typeof x === "number")) {
      throw new IvoaiError("NETWORK", `${source} returned a vector that is not ${dims} numbers`);
    }
    return normalize(Float32Array.from(vector as number[]));
  });
}

export function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] as number) / norm;
  return vector;
}

/** TEI's POST /embed: {"inputs": [...], "truncate": true} → [[float, …], …]. */
function createTeiEmbedder(config: Extract<EmbedderConfig, { provider: "tei" }>): Embedder {
  const url = new URL("/embed", config.url);
  return {
    model: config.model,
    dims: config.dims,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            inputs: texts.map((text) => e5Prefix(text, kind)),
            truncate: true,
            normalize: true,
          }),
          redirect: "error",
          signal: AbortSignal.timeout(config.timeout_ms ?? 30_000),
        });
      } catch (error) {
        throw new IvoaiError("NETWORK", `embedding service at ${url.origin} is unreachable`, {
          cause: error,
        });
      }
      if (!response.ok) throw new IvoaiError("NETWORK", `embedding service answered ${response.status}`);
      return checkVectors(await response.json(), texts.length, config.dims, "embedding service");
    },
  };
}

/** transformers.js from a local model directory; the package is optional and loaded only when configured. */
function createLocalEmbedder(config: Extract<EmbedderConfig, { provider: "local" }>): Embedder {
  type Extractor = (input: string[], options: object) => Promise<{ tolist(): number[][] }>;
  let extractor: Promise<Extractor> | undefined;
  const load = async (): Promise<Extractor> => {
    const specifier = "@huggingface/transformers";
    let module: {
      env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string };
      pipeline(task: string, model: string, options: object): Promise<Extractor>;
    };
    try {
      module = await import(specifier);
    } catch {
      throw new IvoaiError(
        "CONFIG_INVALID",
        "the local embedder needs the optional package @huggingface/transformers (npm install it beside ivoai)",
      );
    }
    module.env.allowRemoteModels = false;
    module.env.allowLocalModels = true;
    module.env.localModelPath = config.model_dir;
    return module.pipeline("feature-extraction", config.model, { local_files_only: true });
  };
  return {
    model: config.model,
    dims: config.dims,
    async embed(texts, kind) {
      if (texts.length === 0) return [];
      extractor ??= load();
      const output = await (await extractor)(
        texts.map((text) => e5Prefix(text, kind)),
        { pooling: "mean", normalize: true },
      );
      return checkVectors(output.tolist(), texts.length, config.dims, "local model");
    },
  };
}
