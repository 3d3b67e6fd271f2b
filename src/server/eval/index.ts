// What the rest of ivoai may use of retrieval evaluation.

export { bootstrapMean, type Interval, pairedDifference } from "./bootstrap.js";
export { FEEDBACK_TOOLS, FEEDBACK_WINDOW_MS, feedbackJudgments } from "./feedback.js";
export {
  type EvalQuery,
  type Judgments,
  parseQrels,
  parseQueries,
  type Qrels,
  readJudgments,
} from "./judgments.js";
export { mrrAt, ndcgAt, recallAt, scoreQuery } from "./metrics.js";
export { EVAL_SCHEMA, type EvalReport, type HitIds, runEval } from "./runner.js";
