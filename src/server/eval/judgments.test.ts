import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseQrels, parseQueries, readJudgments } from "./judgments.js";

describe("BEIR judgments", () => {
  it("reads queries and graded qrels, skipping the header and grades of 0", () => {
    expect(parseQueries('{"_id":"q1","text":"first"}\n\n{"_id":2,"text":"second"}\n')).toEqual([
      { id: "q1", text: "first" },
      { id: "2", text: "second" },
    ]);
    const qrels = parseQrels("query-id\tcorpus-id\tscore\nq1\td1\t2\r\nq1\td2\t0\nq2\td3\t1\n");
    expect([...qrels].map(([id, judged]) => [id, [...judged]])).toEqual([
      ["q1", [["d1", 2]]],
      ["q2", [["d3", 1]]],
    ]);
  });

  it("names the file and line of a malformed entry", () => {
    expect(() => parseQueries('{"_id":"q1","text":"x"}\nnot json', "q.jsonl")).toThrow("q.jsonl:2: not JSON");
    expect(() => parseQueries('{"id":"q1"}', "q.jsonl")).toThrow('q.jsonl:1: expected {"_id"');
    expect(() => parseQrels("q1\td1\t1\nq1 d2 1\n", "r.tsv")).toThrow("r.tsv:2: expected query-id");
  });

  it("keeps only the queries that have a relevant document, and refuses files that share none", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-judgments-"));
    const queries = path.join(dir, "queries.jsonl");
    const qrels = path.join(dir, "qrels.tsv");
    await writeFile(queries, '{"_id":"q1","text":"a"}\n{"_id":"q2","text":"b"}\n');
    await writeFile(qrels, "q2\td1\t1\n");
    expect((await readJudgments(queries, qrels)).queries).toEqual([{ id: "q2", text: "b" }]);
    await writeFile(qrels, "q9\td1\t1\n");
    await expect(readJudgments(queries, qrels)).rejects.toThrow("no query of");
    await expect(readJudgments(path.join(dir, "missing.jsonl"), qrels)).rejects.toThrow("does not exist");
  });
});
