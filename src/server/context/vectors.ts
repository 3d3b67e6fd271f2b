// Vector retrieval: embeddings of chunks in a rebuildable cache named by model, dims, schema and (onnx) the pinned
// files, kept as int8 or float32 (vector-matrix.ts) and searched exactly.
import type { Logger } from "../../shared/logger.js";
import type { Catalogue } from "./catalogue.js";
import type { Embedder } from "./embedder.js";
import { fileVectorStore } from "./vector-file-store.js";
import {
  packMatrix,
  type StoredVector,
  toFormat,
  type VectorFormat,
  type VectorStore,
} from "./vector-matrix.js";
import type { PrefixScan } from "./vector-scan.js";

export type { StoredVector, VectorFormat, VectorStore } from "./vector-matrix.js";
export { fileVectorStore };

export const VECTOR_SCHEMA = 1;

/** `run` with at most one call in flight: callers during a run share its promise. */
export function singleFlight<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  };
}

/**
 * e.g. ivoai-context-v1-multilingual-e5-small-d384, or …-d384-3fa2c1d0 with an onnx model's fingerprint; memory's
 * pages are embedded under ivoai-memory-v1-….
 */
export function vectorIndexName(
  embedder: Pick<Embedder, "model" | "dims" | "fingerprint">,
  service: "context" | "memory" = "context",
): string {
  const model =
    embedder.model
      .split("/")
      .at(-1)
      ?.toLowerCase()
      .replace(/[^a-z0-9]+/g, "-") ?? "model";
  const suffix = embedder.fingerprint ? `-${embedder.fingerprint}` : "";
  return `ivoai-${service}-v${VECTOR_SCHEMA}-${model}-d${embedder.dims}${suffix}`;
}

/** What doctor reports of a vector index: its name and shape, and the rows in memory (undefined before a sync). */
export interface VectorStanding {
  name: string;
  dims: number;
  format: VectorFormat;
  vectors: number | undefined;
}

export interface VectorRetriever {
  active(): boolean;
  readonly name: string;
  standing(): VectorStanding;
  /** Loads and checks the embedder (an onnx model's pins) before the first search. */
  ready(): Promise<void>;
  /** Embeds chunks the cache lacks and drops removed ones; persists the cache when it changed. */
  sync(): Promise<{ embedded: number; total: number }>;
  search(query: string, limit: number): Promise<{ seq: number; score: number }[]>;
}

export interface VectorRetrieverDeps {
  catalogue: Catalogue;
  embedder: Embedder;
  cacheDir: string;
  logger: Logger;
  batchSize?: number;
  /** Default: the file in cacheDir. */
  store?: VectorStore;
  /** How vectors are kept (default int8); stored ones of the other format are converted, or re-embedded. */
  format?: VectorFormat;
  /**
   * For embedders whose leading axes carry most of the signal (the corpus embedder's LSA): above `candidates`
   * rows, score every row on the first `prefix` axes and re-score the best `candidates` on all (vector-scan.ts).
   */
  prefixScan?: PrefixScan;
}

/** Stored vectors in `format`; those that cannot be converted are left out (and so re-embedded). */
export function inFormat(map: Map<string, StoredVector>, format: VectorFormat): Map<string, StoredVector> {
  const out = new Map<string, StoredVector>();
  for (const [id, vector] of map) {
    const converted = toFormat(vector, format);
    if (converted) out.set(id, converted);
  }
  return out;
}

export function createVectorRetriever(deps: VectorRetrieverDeps): VectorRetriever {
  const { embedder, catalogue } = deps;
  const name = vectorIndexName(embedder);
  const store = deps.store ?? fileVectorStore(deps.cacheDir, deps.logger);
  const dims = embedder.dims;
  const format = deps.format ?? "int8";
  let cache: Map<string, StoredVector> | undefined;
  let rows: { seq: number; id: string }[] = [];
  let matrix = packMatrix([], dims, format);
  let generation = -1;

  const allChunks = async () => {
    const all: { seq: number; id: string; text: string }[] = [];
    for (let after = 0; ; ) {
      const page = await catalogue.chunkTextsAfter(after, 10_000);
      all.push(...page);
      if (page.length < 10_000) break;
      after = page.at(-1)?.seq ?? after;
    }
    return all;
  };

  const run = async () => {
    const current = await catalogue.generation();
    cache ??= inFormat(await store.load(name, dims), format);
    if (current === generation) return { embedded: 0, total: rows.length };
    // Rebuild the in-memory rows from the catalogue; embed only what the cache lacks.
    const all = await allChunks();
    let missing = all.filter((row) => !cache?.has(row.id));
    // Another replica may have embedded them since this one loaded (a shared store): take those first.
    if (missing.length > 0 && deps.store) {
      const fresh = inFormat(
        await store.load(
          name,
          dims,
          missing.map((row) => row.id),
        ),
        format,
      );
      for (const [id, vector] of fresh) cache.set(id, vector);
      missing = all.filter((row) => !cache?.has(row.id));
    }
    const added = new Map<string, StoredVector>();
    const batch = deps.batchSize ?? 32;
    for (let i = 0; i < missing.length; i += batch) {
      const slice = missing.slice(i, i + batch);
      const vectors = await embedder.embed(
        slice.map((row) => row.text),
        "passage",
      );
      for (const [index, row] of slice.entries()) {
        const stored = toFormat(vectors[index] as Float32Array, format) as StoredVector;
        cache.set(row.id, stored);
        added.set(row.id, stored);
      }
    }
    const live = new Set(all.map((row) => row.id));
    const dropped: string[] = [];
    for (const id of cache.keys()) {
      if (!live.has(id)) {
        cache.delete(id);
        dropped.push(id);
      }
    }
    if (added.size > 0 || dropped.length > 0) await store.update(name, dims, { added, dropped, all: cache });
    rows = all.map(({ seq, id }) => ({ seq, id }));
    const known = cache;
    matrix = packMatrix(
      rows.map((row) => known.get(row.id) as StoredVector),
      dims,
      format,
    );
    generation = current;
    return { embedded: missing.length, total: rows.length };
  };

  return {
    name,
    active: () => true,
    standing: () => ({ name, dims, format, vectors: generation === -1 ? undefined : rows.length }),
    ready: async () => {
      await embedder.ready?.();
    },
    sync: singleFlight(run),
    async search(query, limit) {
      await this.sync();
      const [vector] = await embedder.embed([query], "query");
      if (!vector) return [];
      return matrix
        .search(vector, limit, deps.prefixScan)
        .map((hit) => ({ seq: (rows[hit.row] as { seq: number }).seq, score: hit.score }));
    },
  };
}
