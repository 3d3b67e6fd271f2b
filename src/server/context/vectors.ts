// Vector retrieval: embeddings of chunks in a rebuildable cache named by model, dims and schema, searched exactly.
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { errnoCode } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import type { Catalogue } from "./catalogue.js";
import type { Embedder } from "./embedder.js";
import { topRowsByDot, topRowsByPrefixDot } from "./vector-scan.js";

export const VECTOR_SCHEMA = 1;

/** e.g. ivoai-context-v1-multilingual-e5-small-d384 */
export function vectorIndexName(embedder: Pick<Embedder, "model" | "dims">): string {
  const model =
    embedder.model
      .split("/")
      .at(-1)
      ?.toLowerCase()
      .replace(/[^a-z0-9]+/g, "-") ?? "model";
  return `ivoai-context-v${VECTOR_SCHEMA}-${model}-d${embedder.dims}`;
}

export interface VectorRetriever {
  active(): boolean;
  readonly name: string;
  /** Embeds chunks the cache lacks and drops removed ones; persists the cache when it changed. */
  sync(): Promise<{ embedded: number; total: number }>;
  search(query: string, limit: number): Promise<{ seq: number; score: number }[]>;
}

/**
 * Where embeddings are kept between runs: a file per index in the cache folder (SQLite servers), or a table in
 * PostgreSQL that every replica loads from, so a chunk is embedded once whichever process ingested it.
 */
export interface VectorStore {
  /** The stored vectors of an index (only those of `ids` when given; a file store may return more). */
  load(name: string, dims: number, ids?: readonly string[]): Promise<Map<string, Float32Array>>;
  /** Records one sync's changes; `all` is the whole set afterwards. */
  update(
    name: string,
    dims: number,
    change: { added: Map<string, Float32Array>; dropped: string[]; all: Map<string, Float32Array> },
  ): Promise<void>;
}

export interface VectorRetrieverDeps {
  catalogue: Catalogue;
  embedder: Embedder;
  cacheDir: string;
  logger: Logger;
  batchSize?: number;
  /** Default: the file in cacheDir. */
  store?: VectorStore;
  /**
   * For embedders whose leading axes carry most of the signal (the corpus embedder's LSA): above `candidates`
   * rows, score every row on the first `prefix` axes and re-score the best `candidates` on all (vector-scan.ts).
   */
  prefixScan?: { prefix: number; candidates: number };
}

const MAGIC = "IVV1";
const ID_BYTES = 32;

/** The file store: one rebuildable binary file per index name in `cacheDir`. */
export function fileVectorStore(cacheDir: string, logger: Logger): VectorStore {
  const fileOf = (name: string) => path.join(cacheDir, `${name}.bin`);
  const loadCache = async (name: string, dims: number): Promise<Map<string, Float32Array>> => {
    const file = fileOf(name);
    const map = new Map<string, Float32Array>();
    let data: Buffer;
    try {
      data = await fs.readFile(file);
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return map;
      throw error;
    }
    // A cache that does not parse is rebuilt, never trusted.
    if (data.length < 12 || data.toString("ascii", 0, 4) !== MAGIC || data.readUInt32LE(4) !== dims) {
      logger.warn("vector cache unreadable; rebuilding", { index: name });
      return map;
    }
    const count = data.readUInt32LE(8);
    const stride = ID_BYTES + dims * 4;
    if (data.length !== 12 + count * stride) return map;
    for (let i = 0; i < count; i++) {
      const at = 12 + i * stride;
      const id = data.toString("ascii", at, at + ID_BYTES);
      const vector = new Float32Array(dims);
      for (let d = 0; d < dims; d++) vector[d] = data.readFloatLE(at + ID_BYTES + d * 4);
      map.set(id, vector);
    }
    return map;
  };

  const saveCache = async (name: string, dims: number, map: Map<string, Float32Array>) => {
    await fs.mkdir(cacheDir, { recursive: true, mode: 0o750 });
    const stride = ID_BYTES + dims * 4;
    const data = Buffer.alloc(12 + map.size * stride);
    data.write(MAGIC, 0, "ascii");
    data.writeUInt32LE(dims, 4);
    data.writeUInt32LE(map.size, 8);
    let at = 12;
    for (const [id, vector] of map) {
      data.write(id.padEnd(ID_BYTES, " ").slice(0, ID_BYTES), at, "ascii");
      for (let d = 0; d < dims; d++) data.writeFloatLE(vector[d] as number, at + ID_BYTES + d * 4);
      at += stride;
    }
    await writeFileAtomic(fileOf(name), data, { mode: 0o640 });
  };
  return { load: loadCache, update: (name, dims, change) => saveCache(name, dims, change.all) };
}

export function createVectorRetriever(deps: VectorRetrieverDeps): VectorRetriever {
  const { embedder, catalogue } = deps;
  const name = vectorIndexName(embedder);
  const store = deps.store ?? fileVectorStore(deps.cacheDir, deps.logger);
  const dims = embedder.dims;
  let cache: Map<string, Float32Array> | undefined;
  let rows: { seq: number; id: string }[] = [];
  let matrix = new Float32Array(0);
  let generation = -1;
  let syncing: Promise<{ embedded: number; total: number }> | undefined;

  const run = async () => {
    const current = await catalogue.generation();
    cache ??= await store.load(name, dims);
    if (current === generation) return { embedded: 0, total: rows.length };
    // Rebuild the in-memory rows from the catalogue; embed only what the cache lacks.
    const all: { seq: number; id: string; text: string }[] = [];
    for (let after = 0; ; ) {
      const page = await catalogue.chunkTextsAfter(after, 10_000);
      all.push(...page);
      if (page.length < 10_000) break;
      after = page.at(-1)?.seq ?? after;
    }
    let missing = all.filter((row) => !cache?.has(row.id));
    // Another replica may have embedded them since this one loaded (a shared store): take those first.
    if (missing.length > 0 && deps.store) {
      const fresh = await store.load(
        name,
        dims,
        missing.map((row) => row.id),
      );
      for (const [id, vector] of fresh) cache.set(id, vector);
      missing = all.filter((row) => !cache?.has(row.id));
    }
    const added = new Map<string, Float32Array>();
    const batch = deps.batchSize ?? 32;
    for (let i = 0; i < missing.length; i += batch) {
      const slice = missing.slice(i, i + batch);
      const vectors = await embedder.embed(
        slice.map((row) => row.text),
        "passage",
      );
      for (const [index, row] of slice.entries()) {
        cache.set(row.id, vectors[index] as Float32Array);
        added.set(row.id, vectors[index] as Float32Array);
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
    matrix = new Float32Array(rows.length * dims);
    for (const [index, row] of rows.entries()) matrix.set(cache.get(row.id) as Float32Array, index * dims);
    generation = current;
    return { embedded: missing.length, total: rows.length };
  };

  return {
    name,
    active: () => true,
    sync() {
      syncing ??= run().finally(() => {
        syncing = undefined;
      });
      return syncing;
    },
    async search(query, limit) {
      await this.sync();
      const [vector] = await embedder.embed([query], "query");
      if (!vector) return [];
      const top = deps.prefixScan
        ? topRowsByPrefixDot(matrix, dims, vector, limit, deps.prefixScan)
        : topRowsByDot(matrix, dims, vector, limit);
      return top.map((hit) => ({
        seq: (rows[hit.row] as { seq: number }).seq,
        score: hit.score,
      }));
    },
  };
}
