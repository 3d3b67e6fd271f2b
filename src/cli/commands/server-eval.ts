// `ivoai server eval`: retrieval measured on the operator's own judgments, method against method, read-only.
import { userInfo } from "node:os";
import path from "node:path";
import type { ServerPaths } from "../../config/server-paths.js";
import { openAuditLogOn } from "../../server/audit/store.js";
import type { SearchHit, SearchMode } from "../../server/context/search.js";
import type { ContextService } from "../../server/context/service.js";
import {
  type EvalReport,
  FEEDBACK_TOOLS,
  FEEDBACK_WINDOW_MS,
  feedbackJudgments,
  type HitIds,
  type Judgments,
  readJudgments,
  runEval,
} from "../../server/eval/index.js";
import { resolveStoreBackend } from "../../server/store/backend.js";
import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import { defineCommand } from "../command.js";
import { createProgress } from "../progress.js";
import { ROOT_OPTION, requireServerTree, withContext } from "./server-common.js";
import { renderEvalReport } from "./server-eval-render.js";

const METHODS = ["lexical", "hybrid"] as const satisfies readonly SearchMode[];

export const serverEvalCommand = defineCommand({
  name: "eval",
  summary:
    "Measure retrieval on your own judged queries: nDCG@10, recall@k and MRR per method, with 95 % CIs",
  description:
    "Runs each judged query through each method (--compare; default lexical, plus hybrid when an embedder is\n" +
    "configured) and prints nDCG@10, recall@k and MRR@10 with a 95 % interval from a paired bootstrap (2,000\n" +
    "resamples, seeded: the same input prints the same figures), each method's difference against the first, and\n" +
    'the queries that won and lost most. Judgments: --queries FILE.jsonl ({"_id", "text"} a line) with --qrels\n' +
    "FILE.tsv (query-id, corpus-id, score; a header line is skipped), the BEIR layout. A corpus-id names a\n" +
    "document as CONNECTOR:PATH, PATH, PATH without its extension, or the file name without its extension.\n" +
    "Read-only: it changes neither the catalogue nor the indexes; the run is recorded in the audit log.",
  json: true,
  options: {
    ...ROOT_OPTION,
    queries: {
      type: "string",
      value: "FILE",
      description: "queries, one JSON object a line (BEIR queries.jsonl)",
    },
    qrels: { type: "string", value: "FILE", description: "relevance judgments (BEIR qrels.tsv)" },
    "from-feedback": {
      type: "boolean",
      description: "judge by what agents opened after a context_search (from the audit log) instead of files",
    },
    k: { type: "integer", value: "N", min: 1, max: 100, default: 10, description: "recall@k's cut-off" },
    compare: {
      type: "enum",
      value: "METHOD",
      choices: METHODS,
      multiple: true,
      description:
        "methods to compare, the first the baseline (default: lexical, and hybrid with an embedder)",
    },
    seed: {
      type: "integer",
      value: "N",
      min: 0,
      max: 2 ** 32 - 1,
      default: 1,
      description: "the bootstrap's seed",
    },
    progress: { type: "boolean", description: "show n/m queries on stderr even when it is not a terminal" },
  },
  async run(ctx) {
    const { queries, qrels, k, compare, seed } = ctx.options;
    const fromFeedback = ctx.options["from-feedback"];
    if (fromFeedback && (queries !== undefined || qrels !== undefined))
      throw new IvoaiError(
        "USAGE",
        "--from-feedback takes no --queries/--qrels: give one source of judgments",
      );
    if (!fromFeedback && (queries === undefined || qrels === undefined))
      throw new IvoaiError(
        "USAGE",
        "give the judgments: --queries FILE.jsonl with --qrels FILE.tsv, or --from-feedback",
      );
    const paths = await requireServerTree(ctx, ["contextDir", "auditDir"]);
    const judgments =
      queries !== undefined && qrels !== undefined
        ? await readJudgments(queries, qrels)
        : await feedbackFrom(paths);
    const progress = createProgress(
      process.stderr,
      ctx.options.progress || (!ctx.json && process.stderr.isTTY === true),
    );
    const report = await withContext(ctx, async (context) => {
      const methods = chooseMethods(compare, context);
      return runEval({
        judgments,
        methods,
        k,
        seed,
        source: fromFeedback ? "feedback" : "qrels",
        search: async (query, mode, limit) =>
          (await context.searcher.search(query, { limit, mode })).map(hitIds),
        onProgress: (done, total) => progress.update(`eval: ${done}/${total} queries`),
      });
    });
    progress.done();
    await recordEval(paths, report);
    ctx.out.data(withHint(report, judgments), renderEvalReport);
    return 0;
  },
});

/** Judgments from the audit log's searches and the documents opened after them; none is a clear error. */
async function feedbackFrom(paths: ServerPaths): Promise<Judgments> {
  const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
  const events = await (async () => {
    try {
      const lists = await Promise.all(
        FEEDBACK_TOOLS.map((tool) =>
          audit.list({ kind: "tool_call", tool, status: "SUCCESS", limit: 100_000 }),
        ),
      );
      return lists.flat();
    } finally {
      await audit.close();
    }
  })();
  const judgments = feedbackJudgments(events);
  if (judgments.queries.length === 0)
    throw new IvoaiError(
      "NOT_FOUND",
      `no judgments in the audit log yet: it needs agents' context_search calls followed within ${FEEDBACK_WINDOW_MS / 60_000} minutes by a document they opened`,
    );
  return judgments;
}

/** The methods asked for, or lexical (and hybrid when the tree has an embedder); hybrid without one is refused. */
function chooseMethods(asked: readonly SearchMode[], context: ContextService): SearchMode[] {
  const methods =
    asked.length > 0 ? [...new Set(asked)] : context.vectors ? ["lexical", "hybrid"] : ["lexical"];
  if (methods.includes("hybrid") && !context.vectors)
    throw new IvoaiError(
      "CONFIG_INVALID",
      'hybrid needs an embedder: set [context.embedder] provider in server.toml, ingest, or compare "lexical" alone',
    );
  return methods as SearchMode[];
}

/** The ids a judged document may carry for this hit: its id, CONNECTOR:PATH, PATH, PATH less its extension, its stem. */
function hitIds(hit: SearchHit): HitIds {
  const { id, connector, rel_path: relPath } = hit.document;
  const extension = path.posix.extname(relPath);
  const stem = extension ? relPath.slice(0, -extension.length) : relPath;
  return [...new Set([`${connector}:${relPath}`, id, relPath, stem, path.posix.basename(stem)])];
}

/** One audit record of the run: who, which methods, how many queries; no query text. */
async function recordEval(paths: ServerPaths, report: EvalReport): Promise<void> {
  const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
  try {
    await audit.record({
      kind: "retrieval_eval",
      actor: `operator:${userInfo().username}`,
      detail: {
        source: report.source,
        methods: report.methods.map((m) => m.method),
        k: report.k,
        queries: report.queries,
        judged_documents: report.judged_documents,
      },
    });
  } finally {
    await audit.close();
  }
}

type ReportWithHint = EvalReport & { hint?: string };

function withHint(report: EvalReport, judgments: Judgments): ReportWithHint {
  if (report.judged_documents_retrieved > 0) return report;
  const example = judgments.qrels.values().next().value?.keys().next().value ?? "";
  return {
    ...report,
    hint: `no judged document was retrieved by any method: do the corpus-ids (e.g. "${oneLine(example)}") name documents as CONNECTOR:PATH, PATH or PATH without its extension?`,
  };
}
