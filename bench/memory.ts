// memory_query quality (recall@10 on FaQuAD, one page per paragraph) beside stock BM25, and its latency at
// 50,000 pages through /v1/memory/mcp with one persistent official MCP client.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { createEnrollmentStore } from "../src/server/enrollment/store.js";
import { preparePageWrite } from "../src/server/memory/page-write.js";
import { openMemoryService } from "../src/server/memory/service.js";
import { analyzeQuery, analyzeWithOffsets } from "../src/server/retrieval/analyzer.js";
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "../src/server/retrieval/lexical-index.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { createRandom, sentencePool } from "./lib/corpus.js";
import { loadCollection, mean, percentile } from "./lib/ir.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const pagesForLatency = Number(process.argv.find((arg) => arg.startsWith("--pages="))?.slice(8) ?? "50000");
const recallAt = (ranked: readonly string[], relevant: ReadonlyMap<string, number>, k = 10) =>
  relevant.size === 0 ? 0 : ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;

async function quality() {
  const collection = loadCollection("faquad");
  const tree = await createBenchTree("memory-quality");
  const paths = serverPaths(tree.root);
  const memory = openMemoryService({
    paths,
    config: await loadServerConfig(paths.configFile),
    logger: silentLogger,
  });
  try {
    for (const doc of collection.docs) {
      const write = preparePageWrite({
        scope: "_global",
        path: `faquad/${doc.id}`,
        title: doc.title,
        body: doc.text,
        author: "bench",
      });
      await memory.store.writePage(write, new Date().toISOString());
    }
    const ours: number[] = [];
    for (const query of collection.queries) {
      const hits = await memory.searcher.search(query.text, ["_global"], 10);
      ours.push(
        recallAt(
          hits.map((hit) => hit.page.path.slice("faquad/".length)),
          collection.qrels.get(query.id) ?? new Map(),
        ),
      );
    }
    const stock = createLexicalIndex({
      ...DEFAULT_LEXICAL_PARAMS,
      k1: 0.9,
      b: 0.4,
      feedbackDocs: 0,
      proximityWeight: 0,
    });
    for (const [key, doc] of collection.docs.entries()) {
      stock.add(
        key,
        analyzeWithOffsets(`${doc.title}
${doc.text}`).terms,
      );
    }
    const reference = collection.queries.map((query) =>
      recallAt(
        stock
          .search(analyzeQuery(query.text), { limit: 10 })
          .map((hit) => collection.docs[hit.key]?.id ?? ""),
        collection.qrels.get(query.id) ?? new Map(),
      ),
    );
    return {
      pages: collection.docs.length,
      queries: collection.queries.length,
      recall10: mean(ours),
      stock: mean(reference),
    };
  } finally {
    memory.close();
    await tree.cleanup();
  }
}

async function latency() {
  const tree = await createBenchTree("memory-latency");
  const paths = serverPaths(tree.root);
  const memory = openMemoryService({
    paths,
    config: await loadServerConfig(paths.configFile),
    logger: silentLogger,
  });
  const random = createRandom(11);
  const pool = sentencePool();
  const at = new Date().toISOString();
  for (let i = 0; i < pagesForLatency; i++) {
    const sentences = Array.from(
      { length: 4 + Math.floor(random() * 8) },
      () => pool[Math.floor(random() * pool.length)],
    );
    const write = preparePageWrite({
      scope: i % 10 === 0 ? "_global" : `project-${i % 7}`,
      path: `notes/${Math.floor(i / 1000)}/page-${i}`,
      body: `# Note ${i}\n\n${sentences.join(" ")}${i > 0 ? `\n\nSee [[notes/${Math.floor((i - 1) / 1000)}/page-${i - 1}]].` : ""}`,
      author: "bench",
    });
    await memory.store.writePage(write, at);
  }
  memory.close();

  const started = performance.now();
  const gateway = await startGateway({ root: tree.root, logger: silentLogger });
  const loadSeconds = (performance.now() - started) / 1000;
  const store = createEnrollmentStore({ statePath: paths.enrollmentState, lockPath: paths.enrollmentLock });
  const { code } = await createEnrollmentService({ store }).createCode({ ttlMs: 60_000 });
  const exchanged = await createEnrollmentService({ store }).exchange(code, "bench");
  store.close();
  if (!exchanged.ok) throw new Error("enrollment failed");
  const client = new Client({ name: "ivoai-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/v1/memory/mcp`), {
      requestInit: {
        headers: { authorization: `Bearer ${exchanged.credential}`, "x-ivoai-project": "project-3" },
      },
    }),
  );
  const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
    loadCollection(name).queries.map((query) => query.text),
  );
  const timings: number[] = [];
  for (let i = 0; i < 1200; i++) {
    const begin = performance.now();
    const result = await client.callTool({
      name: "memory_query",
      arguments: { query: queries[i % queries.length], limit: 10 },
    });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    if (i >= 200) timings.push(performance.now() - begin);
  }
  await client.close();
  await gateway.close();
  await tree.cleanup();
  const sorted = timings.sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    loadSeconds,
  };
}

const q = await quality();
const l = await latency();
const report = [
  "# memory",
  "",
  `${machineLine()}, ${new Date().toISOString()}.`,
  "",
  "## recall@10 of memory_query (FaQuAD: one page per paragraph, its questions as queries)",
  "",
  "| pages | queries | memory_query R@10 | stock BM25 R@10 (k1 0.9, b 0.4, same analyser, in run) |",
  "|---|---|---|---|",
  `| ${q.pages} | ${q.queries} | **${q.recall10.toFixed(3)}** | ${q.stock.toFixed(3)} |`,
  "",
  `## memory_query latency at ${pagesForLatency} pages (through /v1/memory/mcp, one persistent official client, 1,000 queries after 200 warm-up)`,
  "",
  "| p50 ms | p90 ms | p99 ms | target |",
  "|---|---|---|---|",
  `| **${l.p50.toFixed(2)}** | ${l.p90.toFixed(2)} | ${l.p99.toFixed(2)} | p50 ≤ 10 ms |`,
  "",
  `Gateway start including the memory index load: ${l.loadSeconds.toFixed(2)} s.`,
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (!process.argv.includes("--no-save")) await writeFile(path.resolve("bench/results/memory.md"), report);
