// Test-collection loading (BEIR-like corpus/queries/qrels) and the standard ranking metrics.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseQrels, parseQueries } from "../../src/server/eval/judgments.js";
import { mrrAt, ndcgAt, recallAt } from "../../src/server/eval/metrics.js";

export interface Collection {
  name: string;
  docs: { id: string; title: string; text: string }[];
  queries: { id: string; text: string }[];
  qrels: Map<string, Map<string, number>>;
}

export const IR_DATA = path.resolve(process.env.IVOAI_IR_DATA ?? "../shared/data/ir");

export function loadCollection(name: string): Collection {
  const dir = path.join(IR_DATA, name);
  const lines = (file: string) =>
    readFileSync(path.join(dir, file), "utf8")
      .split("\n")
      .filter((line) => line.trim().length > 0);
  const docs = lines("corpus.jsonl").map((line) => {
    const raw = JSON.parse(line) as { _id: string; title?: string; text: string };
    return { id: raw._id, title: raw.title ?? "", text: raw.text };
  });
  // Queries and judgments are read as `ivoai server eval` reads an operator's: one parser for both.
  const text = (file: string) => readFileSync(path.join(dir, file), "utf8");
  const queries = parseQueries(text("queries.jsonl"), "queries.jsonl");
  const qrels = parseQrels(text("qrels.tsv"), "qrels.tsv");
  return { name, docs, queries: queries.filter((query) => qrels.has(query.id)), qrels };
}

/** nDCG@k with linear gains (trec_eval ndcg_cut), recall@k and MRR@k for one ranked list. */
export function scoreRanking(ranked: readonly string[], relevant: ReadonlyMap<string, number>) {
  return {
    ndcg10: ndcgAt(ranked, relevant, 10),
    recall100: recallAt(ranked, relevant, 100),
    mrr10: mrrAt(ranked, relevant, 10),
  };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
