// Relevance judgments in the BEIR layout (queries.jsonl + qrels.tsv): the files `server eval` and the retrieval
// bench read, parsed here once so both read them the same way.
import { readFile } from "node:fs/promises";
import { errnoCode, IvoaiError } from "../../shared/errors.js";

export interface EvalQuery {
  id: string;
  text: string;
}

/** Query id → document id → grade (only grades above 0: a 0 in qrels says "judged not relevant"). */
export type Qrels = Map<string, Map<string, number>>;

export interface Judgments {
  /** The queries that have at least one relevant document, in file order. */
  queries: EvalQuery[];
  qrels: Qrels;
}

/** Parses queries.jsonl: one `{"_id": …, "text": …}` a line (blank lines skipped). `file` names it in errors. */
export function parseQueries(text: string, file = "queries"): EvalQuery[] {
  const queries: EvalQuery[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim().length === 0) continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      throw invalid(file, index, "not JSON");
    }
    const record = raw as { _id?: unknown; text?: unknown } | null;
    const id = typeof record?._id === "number" ? String(record._id) : record?._id;
    if (typeof id !== "string" || id.length === 0 || typeof record?.text !== "string")
      throw invalid(file, index, 'expected {"_id": "…", "text": "…"}');
    queries.push({ id, text: record.text });
  }
  return queries;
}

/** Parses qrels.tsv: `query-id<TAB>corpus-id<TAB>score` lines, an optional header first. */
export function parseQrels(text: string, file = "qrels"): Qrels {
  const qrels: Qrels = new Map();
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim().length === 0) continue;
    const [query, doc, score] = line.replace(/\r$/, "").split("\t");
    if (index === 0 && score !== undefined && Number.isNaN(Number(score))) continue;
    const grade = Number(score);
    if (!query || !doc || score === undefined || !Number.isFinite(grade))
      throw invalid(file, index, "expected query-id, corpus-id and a numeric score separated by tabs");
    if (!(grade > 0)) continue;
    const judged = qrels.get(query) ?? new Map<string, number>();
    qrels.set(query, judged.set(doc, grade));
  }
  return qrels;
}

/** Reads both files; keeps the queries that have a relevant document (as BEIR's evaluation does). */
export async function readJudgments(queriesFile: string, qrelsFile: string): Promise<Judgments> {
  const [queriesText, qrelsText] = await Promise.all([readText(queriesFile), readText(qrelsFile)]);
  const qrels = parseQrels(qrelsText, qrelsFile);
  const queries = parseQueries(queriesText, queriesFile).filter((query) => qrels.has(query.id));
  if (queries.length === 0)
    throw new IvoaiError(
      "CONFIG_INVALID",
      `no query of ${queriesFile} has a relevant document in ${qrelsFile}: check that the query ids match`,
    );
  return { queries, qrels };
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = errnoCode(error);
    throw new IvoaiError(
      code === "ENOENT" ? "NOT_FOUND" : "CONFIG_INVALID",
      code === "ENOENT" ? `${file} does not exist` : `cannot read ${file} (${code ?? "unknown error"})`,
    );
  }
}

function invalid(file: string, index: number, why: string): IvoaiError {
  return new IvoaiError("CONFIG_INVALID", `${file}:${index + 1}: ${why}`);
}
