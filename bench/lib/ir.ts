// Test-collection loading (BEIR-like corpus/queries/qrels) and the standard ranking metrics.
import { readFileSync } from "node:fs";
import path from "node:path";

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
  const queries = lines("queries.jsonl").map((line) => {
    const raw = JSON.parse(line) as { _id: string; text: string };
    return { id: raw._id, text: raw.text };
  });
  const qrels = new Map<string, Map<string, number>>();
  for (const line of lines("qrels.tsv").slice(1)) {
    const [query, doc, score] = line.split("\t");
    if (!query || !doc) continue;
    const grade = Number(score);
    if (!(grade > 0)) continue;
    if (!qrels.has(query)) qrels.set(query, new Map());
    qrels.get(query)?.set(doc, grade);
  }
  return { name, docs, queries: queries.filter((query) => qrels.has(query.id)), qrels };
}

/** nDCG@k with linear gains (trec_eval ndcg_cut), recall@k and MRR@k for one ranked list. */
export function scoreRanking(ranked: readonly string[], relevant: ReadonlyMap<string, number>) {
  const dcg = (gains: number[]) => gains.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  const gains = ranked.slice(0, 10).map((id) => relevant.get(id) ?? 0);
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, 10);
  const ndcg10 = dcg(ideal) > 0 ? dcg(gains) / dcg(ideal) : 0;
  const found = ranked.slice(0, 100).filter((id) => relevant.has(id)).length;
  const recall100 = relevant.size > 0 ? found / relevant.size : 0;
  const first = ranked.slice(0, 10).findIndex((id) => relevant.has(id));
  const mrr10 = first >= 0 ? 1 / (first + 1) : 0;
  return { ndcg10, recall100, mrr10 };
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
