// The corpus embedder (provider "corpus"): an LSA model learned from the catalogue's own chunks, no download. New
// chunks are folded in with the current model; when the corpus changed enough the model is retrained, saved with
// the catalogue, and the vectors recomputed under a new index name (the model's id is part of it).
import { promises as fs } from "node:fs";
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import { analyzeQuery } from "../retrieval/analyzer.js";
import type { Catalogue } from "./catalogue.js";
import {
  type CorpusModel,
  type CorpusModelParams,
  foldIn,
  foldInPassage,
  trainCorpusModel,
} from "./corpus-model.js";
import type { CorpusModelStore } from "./corpus-store.js";
import type { Embedder } from "./embedder.js";
import { wasmRowSum } from "./vector-wasm.js";
import {
  createVectorRetriever,
  singleFlight,
  type VectorFormat,
  type VectorRetriever,
  type VectorStore,
  vectorIndexName,
} from "./vectors.js";

export interface CorpusPolicy {
  /** Retrain when the chunk count moved this share away from the one the model was trained on. */
  retrain_growth: number;
  /** At most this many chunks (an even sample) train the model. */
  train_sample: number;
  /** No model (lexical only) below this many chunks. */
  min_chunks: number;
}

export interface CorpusVectorDeps {
  catalogue: Catalogue;
  params: CorpusModelParams;
  policy: CorpusPolicy;
  models: CorpusModelStore;
  cacheDir: string;
  logger: Logger;
  /** Shared vector store (PostgreSQL); default the file in cacheDir. */
  store?: VectorStore;
  format?: VectorFormat;
}

export interface CorpusVectorRetriever extends VectorRetriever {
  /** The model in use (undefined until the corpus has min_chunks). */
  model(): CorpusModel | undefined;
}

/** The Embedder of one model: passages are the catalogue's analysed terms, queries raw text analysed here. */
export function corpusEmbedder(model: CorpusModel): Embedder {
  // Passages (every chunk at ingest) are folded in on WebAssembly SIMD where it runs.
  const sum = wasmRowSum(model.basis, model.dims);
  return {
    model: `corpus-${model.id}`,
    dims: model.dims,
    async embed(texts, kind) {
      return texts.map((text) =>
        kind === "passage"
          ? sum
            ? foldInPassage(model, text, sum)
            : foldInPassage(model, text)
          : foldIn(model, analyzeQuery(text), "raw"),
      );
    },
  };
}

/**
 * The catalogue as the vector retriever sees it: a chunk's "text" is its analysed terms, read alone (not the
 * chunk texts), whitespace-only chunks left out as chunkTextsAfter leaves them out; its generation is the one
 * the corpus retriever has just read (each of its syncs reads it first), not a second query per search.
 */
function termsView(catalogue: Catalogue, generation: () => number): Catalogue {
  return {
    ...catalogue,
    generation: async () => generation(),
    async chunkTextsAfter(after, limit) {
      const out: { seq: number; id: string; text: string }[] = [];
      for (let from = after; out.length < limit; ) {
        const want = limit - out.length;
        const page = await catalogue.chunkTermsAfter(from, want);
        for (const row of page) if (row.terms !== "") out.push({ seq: row.seq, id: row.id, text: row.terms });
        const end = page.at(-1)?.seq;
        if (end === undefined || page.length < want) break;
        from = end;
      }
      return out;
    },
  };
}

/** Every chunk's analysed terms, or an even sample of `sample` of them. */
async function trainingTerms(catalogue: Catalogue, total: number, sample: number): Promise<string[]> {
  const stride = Math.max(1, total / sample);
  const chosen: string[] = [];
  let index = 0;
  let next = 0;
  for (let after = 0; ; ) {
    const page = await catalogue.chunkTermsAfter(after, 10_000);
    for (const row of page) {
      if (index++ >= next && row.terms) {
        chosen.push(row.terms);
        next += stride;
      }
    }
    const end = page.at(-1)?.seq;
    if (end === undefined || page.length < 10_000) break;
    after = end;
  }
  return chosen;
}

export function createCorpusVectorRetriever(deps: CorpusVectorDeps): CorpusVectorRetriever {
  const { catalogue, models, policy } = deps;
  // The generation this retriever's current sync read (the inner retriever's view answers with it).
  let generation = -1;
  const view = termsView(catalogue, () => generation);
  let model: CorpusModel | undefined;
  let inner: VectorRetriever | undefined;

  const use = async (next: CorpusModel) => {
    const previous = inner?.name;
    model = next;
    inner = createVectorRetriever({
      catalogue: view,
      embedder: corpusEmbedder(next),
      cacheDir: deps.cacheDir,
      logger: deps.logger,
      batchSize: 512,
      // Axes come by singular value: a 16-axis first pass, then the best 2,000 exactly (bench/search-latency.ts).
      prefixScan: { prefix: 16, candidates: 2000 },
      ...(deps.format ? { format: deps.format } : {}),
      ...(deps.store ? { store: deps.store } : {}),
    });
    // The file cache of the model replaced is of no further use (a shared store keeps it for slower replicas).
    if (previous && previous !== inner.name && !deps.store)
      await fs.rm(path.join(deps.cacheDir, `${previous}.bin`), { force: true });
  };

  const stale = (count: number) =>
    !model ||
    Math.abs(count - model.trainedChunks) > policy.retrain_growth * Math.max(1, model.trainedChunks) ||
    JSON.stringify(model.params) !== JSON.stringify(deps.params);

  // A stored model that cannot be read is derived data: say so and train another (saved over it).
  let unreadable = false;
  const loadStored = async () => {
    try {
      return await models.load();
    } catch (error) {
      if (!(error instanceof IvoaiError) || error.code !== "CONFIG_INVALID") throw error;
      deps.logger.warn(`${error.message}: training a new one from the catalogue`);
      unreadable = true;
      return undefined;
    }
  };

  let checked = -1;
  const run = async () => {
    // The model can only have changed (here or on another replica) with the catalogue: the generation is cheap.
    generation = await catalogue.generation();
    if (generation === checked && inner) return inner.sync();
    const count = await catalogue.chunkCount();
    const stored = await models.head();
    if (stored && stored !== model?.id) {
      const loaded = await loadStored();
      if (loaded) await use(loaded);
    }
    if (count >= policy.min_chunks && (stale(count) || unreadable)) {
      unreadable = false;
      const started = Date.now();
      const terms = await trainingTerms(catalogue, count, policy.train_sample);
      const trained = trainCorpusModel(terms, deps.params, count);
      await models.save(trained);
      await use(trained);
      deps.logger.info("corpus model trained", {
        model: trained.id,
        chunks: count,
        sample: terms.length,
        vocabulary: trained.vocabulary.size,
        ms: Date.now() - started,
      });
    }
    checked = generation;
    return inner ? inner.sync() : { embedded: 0, total: 0 };
  };

  return {
    get name() {
      return inner?.name ?? vectorIndexName({ model: "corpus-untrained", dims: deps.params.dims });
    },
    active: () => true,
    standing() {
      return (
        inner?.standing() ?? {
          name: this.name,
          dims: deps.params.dims,
          format: deps.format ?? "int8",
          vectors: 0,
        }
      );
    },
    // Nothing to load: the model is learned (or read) at the first sync.
    ready: async () => {},
    model: () => model,
    sync: singleFlight(run),
    async search(query, limit) {
      await this.sync();
      return inner ? inner.search(query, limit) : [];
    },
  };
}
