// Whether the corpus embedder (context's LSA, no download) helps memory_query on FriendsQA: one LSA model learned
// from every page's analysed terms, each page embedded with the turns around it in its session (weights 0.7^d,
// ±3 turns, as memory's session window), and memory_query's ranking fused with the cosine ranking in the
// question's episode by weighted reciprocal-rank fusion (k 60, depth 60), at several vector weights; weight 0 is
// memory_query as it ships, so every row is measured against it in the same run.
import {
  DEFAULT_CORPUS_PARAMS,
  foldIn,
  foldInPassage,
  trainCorpusModel,
} from "../../src/server/context/corpus-model.js";
import { normalize } from "../../src/server/context/embedder.js";
import { fuseRankings } from "../../src/server/context/fusion.js";
import type { MemorySearcher } from "../../src/server/memory/query.js";
import { splitSessionMarker } from "../../src/server/memory/session-term.js";
import type { MemoryStore } from "../../src/server/memory/store.js";
import { analyzeQuery } from "../../src/server/retrieval/analyzer.js";
import { type ConversationSet, episodeScope, utterancePath } from "./friendsqa.js";
import { mean } from "./ir.js";

const DEPTH = 60;
const RRF_K = 60;
const WINDOW = 3;

/** R@10 of memory_query fused with the LSA ranking at each weight, on one store holding every episode. */
export async function lsaFusionRecall(
  set: ConversationSet,
  store: MemoryStore,
  searcher: MemorySearcher,
  weights: readonly number[],
  dims = DEFAULT_CORPUS_PARAMS.dims,
): Promise<{ weight: number; recall10: number }[]> {
  const rows = await store.pageTermsAfter(0, Number.MAX_SAFE_INTEGER);
  const pages = rows.map((row) => ({ key: row.key, scope: row.scope, ...splitSessionMarker(row.terms) }));
  const model = trainCorpusModel(
    pages.map((page) => page.terms),
    { ...DEFAULT_CORPUS_PARAMS, dims },
  );
  const own = new Map(pages.map((page) => [page.key, foldInPassage(model, page.terms)]));
  const sessions = new Map<string, number[]>();
  for (const page of pages) {
    const id = `${page.scope}\0${page.session ?? page.key}`;
    const keys = sessions.get(id);
    if (keys) keys.push(page.key);
    else sessions.set(id, [page.key]);
  }
  const vectors = new Map<number, Float32Array>();
  for (const keys of sessions.values()) {
    keys.forEach((key, i) => {
      const vector = new Float32Array(dims);
      for (let j = Math.max(0, i - WINDOW); j <= Math.min(keys.length - 1, i + WINDOW); j++) {
        const weight = 0.7 ** Math.abs(i - j);
        const other = own.get(keys[j] as number) as Float32Array;
        for (let d = 0; d < dims; d++) vector[d] = (vector[d] as number) + weight * (other[d] as number);
      }
      vectors.set(key, normalize(vector));
    });
  }
  const heads = await store.pageHeads(pages.map((page) => page.key));
  const idOf = new Map(set.utterances.map((u) => [`${episodeScope(u.project)}\0${utterancePath(u)}`, u.id]));
  const utteranceOf = new Map(
    [...heads].map(([key, head]) => [key, idOf.get(`${head.scope}\0${head.path}`)]),
  );
  const byScope = new Map<string, number[]>();
  for (const page of pages) {
    const keys = byScope.get(page.scope);
    if (keys) keys.push(page.key);
    else byScope.set(page.scope, [page.key]);
  }

  const recalls = new Map(weights.map((weight) => [weight, [] as number[]]));
  for (const query of set.queries) {
    const scope = episodeScope(query.project);
    const lexical = (await searcher.search(query.text, [scope], DEPTH)).map((hit) => hit.page.key);
    const q = foldIn(model, analyzeQuery(query.text), "raw");
    const semantic = (byScope.get(scope) ?? [])
      .map((key) => {
        const vector = vectors.get(key) as Float32Array;
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += (vector[d] as number) * (q[d] as number);
        return { key, dot };
      })
      .sort((a, b) => b.dot - a.dot || a.key - b.key)
      .slice(0, DEPTH);
    const relevant = new Set(query.evidence);
    for (const weight of weights) {
      const fusion = { k: RRF_K, vectorWeight: weight, depthFactor: 0, depthExtra: DEPTH };
      const top = fuseRankings(
        lexical.map((key) => ({ seq: key })),
        semantic.map(({ key }) => ({ seq: key })),
        fusion,
      )
        .slice(0, 10)
        .map(({ seq }) => utteranceOf.get(seq));
      const found = top.filter((id) => id !== undefined && relevant.has(id)).length;
      recalls.get(weight)?.push(relevant.size === 0 ? 0 : found / relevant.size);
    }
  }
  return weights.map((weight) => ({ weight, recall10: mean(recalls.get(weight) ?? []) }));
}
