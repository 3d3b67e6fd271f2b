// `ivoai server eval` comparing lexical with hybrid retrieval through the built CLI, on a tree whose embedder is a
// fake TEI server (POST /embed) that places words of one concept on one axis.
import { writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerConfig, saveServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { rootAndDocs } from "./context-helpers.js";
import { addDocsConnector, initRoot, runIvoai } from "./helpers.js";

const CONCEPTS = [
  ["car", "automobile", "vehicle"],
  ["holiday", "vacation", "leave"],
  ["invoice", "billing"],
];
const DIMS = 4;

function fakeEmbedding(text: string): number[] {
  const vector = new Array(DIMS).fill(0.01);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? [])
    CONCEPTS.forEach((concept, axis) => {
      if (concept.includes(word)) vector[axis] += 1;
    });
  return vector;
}

describe("server eval: lexical against hybrid", () => {
  let tei: http.Server;
  let root: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    tei = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        const parsed = JSON.parse(body) as { inputs: string[] };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(parsed.inputs.map(fakeEmbedding)));
      });
    });
    await new Promise<void>((resolve) => tei.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(tei.address() as AddressInfo).port}`;
    const made = await rootAndDocs(
      {
        "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
        "people.md": "# People\n\nVacation requests go through the portal.",
        "money.md": "# Money\n\nInvoice disputes are handled by finance.",
      },
      cleanups,
    );
    root = made.root;
    await initRoot(root);
    const paths = serverPaths(root);
    const config = await loadServerConfig(paths.configFile);
    await saveServerConfig(paths.configFile, {
      ...config,
      context: {
        ...config.context,
        embedder: {
          provider: "tei",
          url,
          model: "intfloat/multilingual-e5-small",
          dims: DIMS,
          timeout_ms: 5000,
          vector_format: "int8",
        },
      },
    });
    await addDocsConnector(root, made.docs);
    expect((await runIvoai(["server", "ingest", "--root", root])).code).toBe(0);
    await writeFile(
      path.join(root, "q.jsonl"),
      ["car", "holiday", "invoice disputes"]
        .map((text, i) => JSON.stringify({ _id: `q${i + 1}`, text }))
        .join("\n"),
    );
    await writeFile(path.join(root, "qrels.tsv"), "q1\tfleet\t1\nq2\tpeople\t1\nq3\tmoney\t1\n");
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => tei.close(() => resolve()));
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("compares both by default when an embedder is configured, with the queries hybrid won", async () => {
    const args = ["server", "eval", "--root", root, "--queries", path.join(root, "q.jsonl")];
    const result = await runIvoai([...args, "--qrels", path.join(root, "qrels.tsv"), "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.methods.map((m: { method: string }) => m.method)).toEqual(["lexical", "hybrid"]);
    // Lexical finds only the invoice page (no page says "car" or "holiday"); hybrid finds all three first.
    expect(report.methods[0].ndcg10.mean).toBeCloseTo(1 / 3, 10);
    expect(report.methods[1].ndcg10.mean).toBeCloseTo(1, 10);
    const [diff] = report.differences;
    expect(diff).toMatchObject({ method: "hybrid", against: "lexical", lost: [] });
    expect(diff.ndcg10.mean).toBeCloseTo(2 / 3, 10);
    expect(diff.won.map((q: { id: string }) => q.id)).toEqual(["q1", "q2"]);
    const text = await runIvoai([...args, "--qrels", path.join(root, "qrels.tsv")]);
    expect(text.stdout).toMatch(/hybrid − lexical: nDCG@10 \+0\.667/);
    expect(text.stdout).toContain("won most (nDCG@10 lexical → hybrid):");
    expect(text.stdout).toMatch(/q1: 0\.000 → 1\.000 {2}car/);
  });
});
