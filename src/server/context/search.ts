// Retrieval over the catalogue: the lexical index (kept in step with the catalogue's generation), optional
// vector fusion, one best passage per document, and a snippet.

import { IvoaiError } from "../../shared/errors.js";
import { analyzeQuery, foldDiacritics, type Language, words } from "../retrieval/analyzer.js";
import { makeSnippet } from "../retrieval/snippet.js";
import { createSyncedIndex } from "../retrieval/synced-index.js";
import type { Catalogue, DocumentRecord } from "./catalogue.js";
import { DEFAULT_FUSION, type FusionParams, fuseRankings, fusionDepth } from "./fusion.js";
import type { VectorRetriever } from "./vectors.js";

export const MAX_SEARCH_RESULTS = 100;

export interface SearchHit {
  document: DocumentRecord;
  chunk: { id: string; index: number };
  score: number;
  snippet: string;
}

export interface SearchOptions {
  limit: number;
  /** Only documents of this connector. */
  connector?: string;
  /** `lexical`: the lexical ranking alone; `hybrid`: fused with the vectors (needs an embedder). Default: hybrid when vectors are active. */
  mode?: SearchMode;
}

export type SearchMode = "lexical" | "hybrid";

export interface ContextSearcher {
  search(query: string, options: SearchOptions): Promise<SearchHit[]>;
  /** Brings the in-memory index up to the catalogue's latest generation. */
  refresh(): Promise<void>;
  /** Writes the index snapshot now (a no-op without a snapshot file). */
  persist(): Promise<void>;
  readonly indexedChunks: number;
}

export interface ContextSearcherDeps {
  catalogue: Catalogue;
  vectors?: VectorRetriever;
  /** How the vector ranking is fused with the lexical one (default DEFAULT_FUSION). */
  fusion?: FusionParams;
  /** Where the lexical index persists itself, so a start loads it instead of reading every chunk. */
  snapshotFile?: string;
  /** A snapshot that could not be used or written (searches are unaffected). */
  onSnapshotProblem?: (message: string) => void;
  /** Whether the index writes its snapshot by itself when enough changed (the gateway); else only `persist()`. */
  autoPersist?: boolean;
}

export function createContextSearcher(deps: ContextSearcherDeps): ContextSearcher {
  const { catalogue } = deps;
  const index = createSyncedIndex<{ documentId: string; connector: string }>(
    {
      generation: () => catalogue.generation(),
      removedSince: (generation) => catalogue.removedSince(generation),
      async addedAfter(afterKey, limit) {
        const rows = await catalogue.chunkTermsAfter(afterKey, limit);
        return rows.map((row) => ({
          key: row.seq,
          terms: row.terms,
          meta: { documentId: row.document_id, connector: row.connector },
        }));
      },
      languages: async () =>
        (await catalogue.languages()).filter((value): value is Language => value === "en" || value === "pt"),
      instance: () => catalogue.instance(),
      count: () => catalogue.chunkCount(),
    },
    {
      ...(deps.snapshotFile ? { snapshotFile: deps.snapshotFile } : {}),
      ...(deps.onSnapshotProblem ? { onSnapshotProblem: deps.onSnapshotProblem } : {}),
      ...(deps.autoPersist ? {} : { snapshotAfterChanges: Number.POSITIVE_INFINITY }),
      ...(catalogue.changes ? { changes: catalogue.changes } : {}),
    },
  );
  const refresh = () => index.refresh();

  return {
    get indexedChunks() {
      return index.size;
    },
    refresh,
    persist: () => index.persist(),
    async search(query, options) {
      await refresh();
      const limit = Math.max(1, Math.min(options.limit, MAX_SEARCH_RESULTS));
      const fusion = deps.fusion ?? DEFAULT_FUSION;
      const depth = fusionDepth(limit, fusion);
      const lexical = index.search(analyzeQuery(query, index.languages()), { limit: depth });
      let ranked = lexical.map((hit) => ({ seq: hit.key, score: hit.score }));
      if (options.mode === "hybrid" && !deps.vectors?.active()) {
        throw new IvoaiError(
          "CONFIG_INVALID",
          "hybrid search needs an embedder: set [context.embedder] in server.toml and ingest again",
        );
      }
      // A vector ranking weighed 0 changes nothing: it is not computed.
      if (options.mode !== "lexical" && deps.vectors?.active() && fusion.vectorWeight > 0) {
        const semantic = await deps.vectors.search(query, depth);
        ranked = fuseRankings(ranked, semantic, fusion);
      }
      const best: { seq: number; score: number; documentId: string }[] = [];
      const taken = new Set<string>();
      for (const hit of ranked) {
        const info = index.meta(hit.seq);
        if (!info || taken.has(info.documentId)) continue;
        if (options.connector && info.connector !== options.connector) continue;
        taken.add(info.documentId);
        best.push({ ...hit, documentId: info.documentId });
        if (best.length === limit) break;
      }
      const [chunks, documents] = await Promise.all([
        catalogue.chunksBySeq(best.map((hit) => hit.seq)),
        catalogue.documentsByIds(best.map((hit) => hit.documentId)),
      ]);
      const terms = words(query)
        .map(foldDiacritics)
        .filter((word) => word.length > 2);
      const hits: SearchHit[] = [];
      for (const hit of best) {
        const chunk = chunks.get(hit.seq);
        const document = documents.get(hit.documentId);
        // A chunk or document removed since the index last synced is simply not a result; nor is a passage whose
        // in-memory metadata disagrees with the catalogue (the authority), e.g. from a faulty snapshot.
        if (!chunk || !document || chunk.document_id !== hit.documentId) continue;
        if (options.connector && document.connector !== options.connector) continue;
        hits.push({
          document,
          chunk: { id: chunk.id, index: chunk.idx },
          score: Math.round(hit.score * 10_000) / 10_000,
          snippet: makeSnippet(chunk.text, terms),
        });
      }
      return hits;
    },
  };
}
