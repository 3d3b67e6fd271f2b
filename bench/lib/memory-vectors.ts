// The cost of memory's vector side at the latency bench's size: every page given a 384-dims vector (int8 in the
// scan, as with multilingual-e5-small) by a synthetic embedder — seeded gaussian unit vectors from a hash of the
// text, so the scan, the row filter, the fusion and the refresh after a write cost what a real model's vectors
// would, while the model's own inference time (one query a search) is left out and reported as such. Quality is
// not measured: no real model can be downloaded here.
import type { Embedder } from "../../src/server/context/embedder.js";
import { normalize } from "../../src/server/context/embedder.js";
import { DEFAULT_FUSION } from "../../src/server/context/fusion.js";
import { gaussian } from "../../src/server/context/lsa.js";
import { preparePageWrite } from "../../src/server/memory/page-write.js";
import { createMemorySearcher, type MemoryIndex } from "../../src/server/memory/query.js";
import type { MemoryStore } from "../../src/server/memory/store.js";
import { createMemoryVectors } from "../../src/server/memory/vectors.js";
import { silentLogger } from "../../src/shared/logger.js";

const DIMS = 384;

function syntheticEmbedder(): Embedder {
  const hash = (text: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h >>> 0;
  };
  return {
    model: "synthetic-e5-shaped",
    dims: DIMS,
    embed: async (texts) =>
      texts.map((text) => {
        const random = gaussian(hash(text));
        return normalize(Float32Array.from({ length: DIMS }, () => random()));
      }),
  };
}

export interface HybridTimings {
  /** Embedding and storing every page's vector (the first start with a model), seconds. */
  fillSeconds: number;
  vectors: number;
  hybrid: number[];
  /** The vector search alone (query embedding, filtered scan, top 60). */
  scan: number[];
  /** memory_query right after a page write: the vector side embeds the page and scores it in its scope's tail. */
  afterWrite: number[];
  /** The same queries again with no write between (the control). */
  repeated: number[];
}

export async function hybridLatency(
  store: MemoryStore,
  index: MemoryIndex,
  queries: readonly string[],
  counts: { warmUp: number; measured: number; writes: number },
  scopes: readonly string[],
): Promise<HybridTimings> {
  const vectors = createMemoryVectors({
    store,
    embedder: syntheticEmbedder(),
    logger: silentLogger,
    batchSize: 256,
  });
  const started = performance.now();
  const filled = await vectors.refresh();
  const fillSeconds = (performance.now() - started) / 1000;
  const searcher = createMemorySearcher(store, index, { vectors, fusion: DEFAULT_FUSION });
  const hybrid: number[] = [];
  const scan: number[] = [];
  for (let i = 0; i < counts.warmUp + counts.measured; i++) {
    const query = queries[i % queries.length] as string;
    let begin = performance.now();
    await searcher.search(query, scopes, 10);
    if (i >= counts.warmUp) hybrid.push(performance.now() - begin);
    begin = performance.now();
    await vectors.search(query, scopes, 60);
    if (i >= counts.warmUp) scan.push(performance.now() - begin);
  }
  const { afterWrite, repeated } = await timeAfterWrites(store, queries, {
    writes: counts.writes,
    scope: scopes[0] as string,
    paths: (i) => `notes/vector-fresh/page-${i % 10}`,
    search: (query) => searcher.search(query, scopes, 10),
  });
  return { fillSeconds, vectors: filled.total, hybrid, scan, afterWrite, repeated };
}

/**
 * A query right after each of `writes` page writes (it pays the refreshes a write causes), and the same query again
 * with no write between (its control); the writes replace pages at `paths(i)` in `scope`.
 */
export async function timeAfterWrites(
  store: MemoryStore,
  queries: readonly string[],
  options: {
    writes: number;
    scope: string;
    paths: (i: number) => string;
    search: (query: string) => Promise<unknown>;
  },
): Promise<{ afterWrite: number[]; repeated: number[] }> {
  const afterWrite: number[] = [];
  const repeated: number[] = [];
  for (let i = 0; i < options.writes; i++) {
    await store.writePage(
      preparePageWrite({
        scope: options.scope,
        path: options.paths(i),
        body: `# Fresh ${i}\n\n${queries[i % queries.length]}`,
        author: "bench",
      }),
      new Date().toISOString(),
    );
    const query = queries[(i * 7) % queries.length] as string;
    for (const timings of [afterWrite, repeated]) {
      const begin = performance.now();
      await options.search(query);
      timings.push(performance.now() - begin);
    }
  }
  return { afterWrite, repeated };
}
