// Tunes the corpus embedder (LSA dims, term weighting, σ power, min df) and its fusion with the lexical ranking
// (RRF k, vector weight) on the dev sets (../shared/data/ir), in process; the chosen defaults are written to
// bench/results/tune-corpus.md. Lexical ranking: the searcher's own index parameters over title + text.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  type CorpusModelParams,
  DEFAULT_CORPUS_PARAMS,
  foldIn,
  termCounts,
  trainCorpusModel,
} from "../src/server/context/corpus-model.js";
import { fuseRankings } from "../src/server/context/fusion.js";
import { analyzeQuery, analyzeWithOffsets } from "../src/server/retrieval/analyzer.js";
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "../src/server/retrieval/lexical-index.js";
import { type Collection, loadCollection, mean, scoreRanking } from "./lib/ir.js";

const COLLECTIONS = ["cranfield", "adi", "faquad"];
const DEPTH = 60;
const quick = process.argv.includes("--quick");

interface Prepared {
  collection: Collection;
  terms: string[];
  lexical: { seq: number }[][];
  lexicalNdcg: number;
}

function prepare(collection: Collection): Prepared {
  const index = createLexicalIndex(DEFAULT_LEXICAL_PARAMS);
  const terms = collection.docs.map((doc) => analyzeWithOffsets(`${doc.title}\n${doc.text}`).terms.join(" "));
  for (const [key, doc] of collection.docs.entries())
    index.add(key, analyzeWithOffsets(`${doc.title}\n${doc.text}`).terms);
  const lexical = collection.queries.map((query) =>
    index.search(analyzeQuery(query.text), { limit: DEPTH }).map((hit) => ({ seq: hit.key })),
  );
  return { collection, terms, lexical, lexicalNdcg: ndcg(collection, lexical) };
}

function ndcg(collection: Collection, rankings: { seq: number }[][]): number {
  return mean(
    rankings.map((ranked, q) => {
      const query = collection.queries[q] as { id: string };
      const ids = ranked.map((hit) => collection.docs[hit.seq]?.id ?? "");
      return scoreRanking(ids, collection.qrels.get(query.id) ?? new Map()).ndcg10;
    }),
  );
}

/** Vector rankings of every query under `params`. */
function vectorRankings(prepared: Prepared, params: CorpusModelParams): { seq: number }[][] {
  const model = trainCorpusModel(prepared.terms, params);
  const dims = model.dims;
  const matrix = new Float32Array(prepared.terms.length * dims);
  for (const [i, terms] of prepared.terms.entries())
    matrix.set(foldIn(model, termCounts(terms), "log"), i * dims);
  return prepared.collection.queries.map((query) => {
    const vector = foldIn(model, analyzeQuery(query.text), "raw");
    const scored: { seq: number; score: number }[] = [];
    for (let row = 0; row < prepared.terms.length; row++) {
      let dot = 0;
      for (let d = 0; d < dims; d++) dot += (matrix[row * dims + d] as number) * (vector[d] as number);
      scored.push({ seq: row, score: dot });
    }
    return scored.sort((a, b) => b.score - a.score || a.seq - b.seq).slice(0, DEPTH);
  });
}

const prepared = COLLECTIONS.map((name) => prepare(loadCollection(name)));
const grid: Partial<CorpusModelParams>[] = [];
for (const dims of quick ? [128] : [64, 128, 256])
  for (const weighting of ["log-entropy", "tfidf"] as const)
    for (const sigma_power of quick ? [0.5] : [0, 0.5, 1])
      for (const min_df of [1, 2]) grid.push({ dims, weighting, sigma_power, min_df });
const fusions = [];
for (const k of [10, 30, 60, 100])
  for (const vectorWeight of [0.2, 0.35, 0.5, 0.75, 1]) fusions.push({ k, vectorWeight });

interface Result {
  params: Partial<CorpusModelParams>;
  fusion: { k: number; vectorWeight: number };
  ndcg: number[];
  vectorOnly: number[];
}
const results: Result[] = [];
for (const params of grid) {
  const full = { ...DEFAULT_CORPUS_PARAMS, ...params };
  const semantic = prepared.map((set) => vectorRankings(set, full));
  const vectorOnly = prepared.map((set, i) => ndcg(set.collection, semantic[i] as { seq: number }[][]));
  for (const fusion of fusions) {
    const fp = { ...fusion, depthFactor: 4, depthExtra: 20 };
    const ndcgs = prepared.map((set, i) =>
      ndcg(
        set.collection,
        set.lexical.map((lexical, q) =>
          fuseRankings(lexical, (semantic[i] as { seq: number }[][])[q] ?? [], fp),
        ),
      ),
    );
    results.push({ params, fusion, ndcg: ndcgs, vectorOnly });
  }
  process.stderr.write(
    `${JSON.stringify(params)} vector-only ${vectorOnly.map((x) => x.toFixed(3)).join(" ")}\n`,
  );
}
// Objective: the mean relative gain over lexical-only, among settings that leave no set worse than lexical-only.
const gain = (r: Result) => mean(r.ndcg.map((value, i) => value / (prepared[i] as Prepared).lexicalNdcg - 1));
const safe = results.filter((r) =>
  r.ndcg.every((value, i) => value >= (prepared[i] as Prepared).lexicalNdcg),
);
const ranked = (safe.length > 0 ? safe : results).sort((a, b) => gain(b) - gain(a));
const fixed = (value: number) => value.toFixed(3);
const row = (r: Result) =>
  `| ${r.params.dims} | ${r.params.weighting} | ${r.params.sigma_power} | ${r.params.min_df} | ${r.fusion.k} | ${r.fusion.vectorWeight} | ${r.ndcg.map(fixed).join(" | ")} | ${r.vectorOnly.map(fixed).join(" / ")} | ${(gain(r) * 100).toFixed(1)} % |`;
const report = [
  "# tune-corpus",
  "",
  `Corpus embedder (LSA) + RRF fusion tuned on the dev sets, in process (lexical: the searcher's index over title + text; depth ${DEPTH}). ${new Date().toISOString()}, node ${process.version}.`,
  `${grid.length} model settings × ${fusions.length} fusion settings; objective: mean relative nDCG@10 gain over lexical-only, no set worse than lexical-only (${safe.length} settings qualify).`,
  "",
  `lexical-only nDCG@10: ${prepared.map((set) => `${set.collection.name} ${fixed(set.lexicalNdcg)}`).join(", ")}`,
  "",
  `| dims | weighting | σ power | min df | RRF k | vector weight | ${COLLECTIONS.join(" | ")} | vector-only (${COLLECTIONS.join(" / ")}) | gain vs lexical |`,
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ...ranked.slice(0, 15).map(row),
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (!process.argv.includes("--no-save"))
  await writeFile(path.resolve("bench/results/tune-corpus.md"), report);
