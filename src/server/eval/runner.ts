// Runs judged queries through each retrieval method and reports the metrics with paired-bootstrap intervals,
// the difference of each method against the first, and the queries that gained and lost most.
import type { SearchMode } from "../context/search.js";
import {
  bootstrapMean,
  DEFAULT_RESAMPLES,
  DEFAULT_SEED,
  type Interval,
  pairedDifference,
} from "./bootstrap.js";
import type { Judgments } from "./judgments.js";
import { type QueryScores, scoreQuery } from "./metrics.js";

/** The report's `schema`: bump it when a field changes meaning or goes away. */
export const EVAL_SCHEMA = "ivoai.eval/v1";

export type EvalMetric = keyof QueryScores;
const METRICS: readonly EvalMetric[] = ["ndcg10", "recall", "mrr10"];

/** One result of a search: the ids it may be judged under (e.g. `connector:path`, `path`, `path` less its extension). */
export type HitIds = readonly string[];

export interface EvalRunOptions {
  judgments: Judgments;
  methods: readonly SearchMode[];
  /** recall@k's cut-off; the searcher is asked for max(k, 10) results. */
  k: number;
  search(query: string, method: SearchMode, limit: number): Promise<HitIds[]>;
  onProgress?(done: number, total: number): void;
  resamples?: number;
  seed?: number;
  /** How many queries won and lost to list per comparison (default 5). */
  top?: number;
  source: "qrels" | "feedback";
}

export type MethodScores = { method: SearchMode } & Record<EvalMetric, Interval>;

export interface QueryChange {
  id: string;
  text: string;
  /** nDCG@10 of each method for this query. */
  ndcg10: Record<string, number>;
  /** nDCG@10 of the method minus the baseline's. */
  delta: number;
}

export type MethodDifference = { method: SearchMode; against: SearchMode } & Record<EvalMetric, Interval> & {
    won: QueryChange[];
    lost: QueryChange[];
  };

export interface EvalReport {
  schema: typeof EVAL_SCHEMA;
  source: "qrels" | "feedback";
  k: number;
  queries: number;
  judged_documents: number;
  /** Judged documents found in at least one method's results (0 usually means ids that do not match). */
  judged_documents_retrieved: number;
  bootstrap: { resamples: number; seed: number; confidence: 0.95 };
  methods: MethodScores[];
  differences: MethodDifference[];
}

export async function runEval(options: EvalRunOptions): Promise<EvalReport> {
  const { judgments, methods, k } = options;
  const limit = Math.max(k, 10);
  const total = judgments.queries.length * methods.length;
  const perMethod = new Map<SearchMode, QueryScores[]>(methods.map((method) => [method, []]));
  const retrieved = new Set<string>();
  let done = 0;
  for (const query of judgments.queries) {
    const relevant = judgments.qrels.get(query.id) ?? new Map<string, number>();
    for (const method of methods) {
      const hits = await options.search(query.text, method, limit);
      const ranked = hits.map((ids) => ids.find((id) => relevant.has(id)) ?? ids[0] ?? "");
      for (const id of ranked) if (relevant.has(id)) retrieved.add(`${query.id}\t${id}`);
      perMethod.get(method)?.push(scoreQuery(ranked, relevant, k));
      options.onProgress?.(++done, total);
    }
  }
  const boot = { resamples: options.resamples ?? DEFAULT_RESAMPLES, seed: options.seed ?? DEFAULT_SEED };
  const column = (method: SearchMode, metric: EvalMetric) =>
    (perMethod.get(method) ?? []).map((scores) => scores[metric]);
  const intervals = (each: (metric: EvalMetric) => Interval) =>
    Object.fromEntries(METRICS.map((metric) => [metric, each(metric)])) as Record<EvalMetric, Interval>;
  const [baseline] = methods;
  return {
    schema: EVAL_SCHEMA,
    source: options.source,
    k,
    queries: judgments.queries.length,
    judged_documents: [...judgments.qrels.values()].reduce((sum, judged) => sum + judged.size, 0),
    judged_documents_retrieved: retrieved.size,
    bootstrap: { ...boot, confidence: 0.95 },
    methods: methods.map((method) => ({
      method,
      ...intervals((metric) => bootstrapMean(column(method, metric), boot)),
    })),
    differences:
      baseline === undefined
        ? []
        : methods.slice(1).map((method) => ({
            method,
            against: baseline,
            ...intervals((metric) =>
              pairedDifference(column(baseline, metric), column(method, metric), boot),
            ),
            ...changes(options, perMethod, baseline, method),
          })),
  };
}

/** The queries whose nDCG@10 rose and fell most from `baseline` to `method` (ties by query order). */
function changes(
  options: EvalRunOptions,
  perMethod: ReadonlyMap<SearchMode, QueryScores[]>,
  baseline: SearchMode,
  method: SearchMode,
): { won: QueryChange[]; lost: QueryChange[] } {
  const top = options.top ?? 5;
  const all = options.judgments.queries.map((query, i) => {
    const ndcg10 = Object.fromEntries(
      options.methods.map((each) => [each, perMethod.get(each)?.[i]?.ndcg10 ?? 0]),
    );
    return { id: query.id, text: query.text, ndcg10, delta: (ndcg10[method] ?? 0) - (ndcg10[baseline] ?? 0) };
  });
  const byGain = all.map((change, order) => ({ change, order }));
  const won = byGain
    .filter(({ change }) => change.delta > 0)
    .sort((a, b) => b.change.delta - a.change.delta || a.order - b.order);
  const lost = byGain
    .filter(({ change }) => change.delta < 0)
    .sort((a, b) => a.change.delta - b.change.delta || a.order - b.order);
  return {
    won: won.slice(0, top).map(({ change }) => change),
    lost: lost.slice(0, top).map(({ change }) => change),
  };
}
