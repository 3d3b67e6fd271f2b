// Retrieval quality through the real ingest + search path, beside stock BM25 (reference and in-run).
// `--dump=FILE` also writes every query's ranked list with scores, to prove an index change leaves rankings identical.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { analyzeQuery, analyzeWithOffsets } from "../src/server/retrieval/analyzer.js";
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "../src/server/retrieval/lexical-index.js";
import { type Collection, loadCollection, mean, scoreRanking } from "./lib/ir.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

/** Stock Lucene BM25 (k1 0.9, b 0.4, Snowball, stopwords): the figures the issue names. */
const REFERENCE_NDCG10: Record<string, number> = { cranfield: 0.353, adi: 0.467, faquad: 0.905 };
const COLLECTIONS = ["cranfield", "adi", "faquad"];
const dumpFile = process.argv.find((arg) => arg.startsWith("--dump="))?.slice(7);
const rankings: Record<string, [string, number][]> = {};

interface Row {
  collection: string;
  docs: number;
  queries: number;
  ndcg10: number;
  recall100: number;
  mrr10: number;
  stock_bm25_ndcg10: number;
  reference_ndcg10: number;
}

async function evaluate(collection: Collection): Promise<Row> {
  const tree = await createBenchTree(collection.name);
  try {
    const corpus = path.join(tree.root, "corpus");
    await mkdir(corpus);
    for (const doc of collection.docs) {
      const body = doc.title ? `# ${doc.title}\n\n${doc.text}\n` : `${doc.text}\n`;
      await writeFile(path.join(corpus, `${doc.id}.md`), body);
    }
    const context = await tree.open();
    try {
      await context.addConnector({ name: "bench", type: "filesystem", path: corpus });
      const [summary] = await context.ingest(["bench"]);
      if (summary?.added !== collection.docs.length)
        throw new Error(`ingested ${summary?.added} of ${collection.docs.length}`);
      const metrics = [];
      for (const query of collection.queries) {
        const hits = await context.searcher.search(query.text, { limit: 100 });
        const ranked = hits.map((hit) => path.basename(hit.document.rel_path, ".md"));
        rankings[`${collection.name}/${query.id}`] = hits.map((hit, i) => [ranked[i] as string, hit.score]);
        metrics.push(scoreRanking(ranked, collection.qrels.get(query.id) ?? new Map()));
      }
      return {
        collection: collection.name,
        docs: collection.docs.length,
        queries: collection.queries.length,
        ndcg10: mean(metrics.map((m) => m.ndcg10)),
        recall100: mean(metrics.map((m) => m.recall100)),
        mrr10: mean(metrics.map((m) => m.mrr10)),
        stock_bm25_ndcg10: stockBm25(collection),
        reference_ndcg10: REFERENCE_NDCG10[collection.name] ?? Number.NaN,
      };
    } finally {
      await context.close();
    }
  } finally {
    await tree.cleanup();
  }
}

/** In-run baseline: plain BM25 with Lucene's parameters over the same analysed text (no title field, no feedback). */
function stockBm25(collection: Collection): number {
  const index = createLexicalIndex({
    ...DEFAULT_LEXICAL_PARAMS,
    k1: 0.9,
    b: 0.4,
    feedbackDocs: 0,
    proximityWeight: 0,
  });
  collection.docs.forEach((doc, key) => {
    const text = `${doc.title}\n${doc.text}`;
    index.add(key, analyzeWithOffsets(text).terms);
  });
  const scores = collection.queries.map((query) => {
    const ranked = index
      .search(analyzeQuery(query.text), { limit: 100 })
      .map((hit) => collection.docs[hit.key]?.id ?? "");
    return scoreRanking(ranked, collection.qrels.get(query.id) ?? new Map()).ndcg10;
  });
  return mean(scores);
}

const rows: Row[] = [];
for (const name of COLLECTIONS) rows.push(await evaluate(loadCollection(name)));
const meanOurs = mean(rows.map((row) => row.ndcg10));
const meanReference = mean(rows.map((row) => row.reference_ndcg10));
const fixed = (value: number) => value.toFixed(3);
const table = [
  "| collection | docs | queries | nDCG@10 | R@100 | MRR@10 | stock BM25 nDCG@10 (in run) | reference nDCG@10 |",
  "|---|---|---|---|---|---|---|---|",
  ...rows.map(
    (row) =>
      `| ${row.collection} | ${row.docs} | ${row.queries} | ${fixed(row.ndcg10)} | ${fixed(row.recall100)} | ${fixed(row.mrr10)} | ${fixed(row.stock_bm25_ndcg10)} | ${fixed(row.reference_ndcg10)} |`,
  ),
  `| **mean** | | | **${fixed(meanOurs)}** | | | ${fixed(mean(rows.map((row) => row.stock_bm25_ndcg10)))} | ${fixed(meanReference)} |`,
];
const verdict = [
  `every set ≥ reference: ${rows.every((row) => row.ndcg10 >= row.reference_ndcg10) ? "yes" : "NO"}`,
  `mean vs reference: ${(((meanOurs - meanReference) / meanReference) * 100).toFixed(1)} % (target ≥ +5 %)`,
];
const report = [
  "# retrieval",
  "",
  `Lexical-only (embedder none), through server init → connector add → ingest → search. ${machineLine()}, ${new Date().toISOString()}.`,
  "",
  ...table,
  "",
  ...verdict.map((line) => `- ${line}`),
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (dumpFile) await writeFile(path.resolve(dumpFile), `${JSON.stringify(rankings)}\n`);
if (!process.argv.includes("--no-save")) {
  await writeFile(path.resolve("bench/results/retrieval.md"), report);
  await writeFile(
    path.resolve("bench/results/retrieval.json"),
    `${JSON.stringify({ rows, meanOurs, meanReference }, null, 2)}\n`,
  );
}
