import { describe, expect, it } from "vitest";
import type { SearchMode } from "../context/search.js";
import { parseQrels } from "./judgments.js";
import { runEval } from "./runner.js";

// Three queries, each with one relevant document; hybrid ranks it first on q1 and q2, lexical only on q3.
const judgments = {
  queries: [
    { id: "q1", text: "one" },
    { id: "q2", text: "two" },
    { id: "q3", text: "three" },
  ],
  qrels: parseQrels("q1\td1\t1\nq2\td2\t1\nq3\td3\t1\n"),
};
const rankings: Record<SearchMode, Record<string, string[][]>> = {
  lexical: { one: [["x"], ["d1"]], two: [["x"], ["y"]], three: [["d3"]] },
  hybrid: { one: [["d1"]], two: [["c:d2.md", "d2"]], three: [["x"], ["d3"]] },
};

describe("the eval runner", () => {
  it("scores each method, judges a hit by any of its ids, and lists the queries that won and lost", async () => {
    const progress: string[] = [];
    const report = await runEval({
      judgments,
      methods: ["lexical", "hybrid"],
      k: 10,
      source: "qrels",
      search: async (query, method) => rankings[method][query] ?? [],
      onProgress: (done, total) => progress.push(`${done}/${total}`),
    });
    expect(progress.at(-1)).toBe("6/6");
    expect(report.methods.map((m) => [m.method, m.mrr10.mean])).toEqual([
      ["lexical", (0.5 + 0 + 1) / 3],
      ["hybrid", (1 + 1 + 0.5) / 3],
    ]);
    const [diff] = report.differences;
    expect(diff?.against).toBe("lexical");
    expect(diff?.mrr10.mean).toBeCloseTo(1 / 3, 10);
    expect(diff?.won.map((change) => change.id)).toEqual(["q2", "q1"]);
    expect(diff?.lost.map((change) => change.id)).toEqual(["q3"]);
    expect(diff?.won[0]?.ndcg10).toEqual({ lexical: 0, hybrid: 1 });
    expect(report.judged_documents_retrieved).toBe(3);
  });
});
