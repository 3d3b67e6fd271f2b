// The Embedder seam: none (lexical only, the default), tei (HTTP, the seed's TEI service) or onnx (in process, an
// operator-supplied model folder pinned by SHA-256: onnx/). TEI's E5 prefixes are applied here, onnx's from config.
import type { ServerConfig } from "../../config/server-config.js";
import { IvoaiError } from "../../shared/errors.js";
import { createOnnxEmbedder } from "./onnx/onnx-embedder.js";

export type EmbeddingKind = "query" | "passage";

export interface Embedder {
  /** Model name as configured (part of the vector index name). */
  model: string;
  dims: number;
  /** What else the vectors depend on (pins, prefixes), so that a change names a new index. */
  fingerprint?: string;
  /** Loads and checks what the embedder needs before the first text (a server start waits for it). */
  ready?(): Promise<void>;
  embed(texts: readonly string[], kind: EmbeddingKind): Promise<Float32Array[]>;
}

export type EmbedderConfig = ServerConfig["context"]["embedder"];

/** The configured vector format (int8 unless a provider says float32). */
export function vectorFormatOf(config: EmbedderConfig): "int8" | "float32" {
  return "vector_format" in config && config.vector_format === "float32" ? "float32" : "int8";
}

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
    case "onnx":
      return createOnnxEmbedder(config);
    case "corpus":
      // Learned from the catalogue, not from settings alone: corpus-vectors.ts builds it.
      return undefined;
    case "local":
      // The schema refuses it; a config built in code still gets the same word.
      throw new IvoaiError("CONFIG_INVALID", 'context.embedder: provider "local" was replaced by "onnx"');
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
