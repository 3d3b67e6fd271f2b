// context_search latency through the MCP endpoint (one persistent official client) on ~100,000 chunks.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { createEnrollmentStore } from "../src/server/enrollment/store.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { generateCorpus } from "./lib/corpus.js";
import { loadCollection, percentile } from "./lib/ir.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const targetChunks = Number(process.argv.find((arg) => arg.startsWith("--chunks="))?.slice(9) ?? "100000");
const measured = 2000;
const warmup = 200;

const tree = await createBenchTree("latency");
try {
  // ~20.7 chunks per 16 kB document with the default chunk policy.
  const corpus = await generateCorpus(path.join(tree.root, "corpus"), Math.ceil(targetChunks / 20.7), 16_000);
  const context = await tree.open();
  await context.addConnector({ name: "bench", type: "filesystem", path: corpus.dir });
  await context.ingest(["bench"]);
  const stats = await context.catalogue.stats();
  const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
    loadCollection(name).queries.map((query) => query.text),
  );
  // The search core alone, in process, to tell retrieval cost from MCP + HTTP overhead.
  const core: number[] = [];
  for (let i = 0; i < warmup + measured; i++) {
    const started = performance.now();
    await context.searcher.search(queries[i % queries.length] as string, { limit: 10 });
    if (i >= warmup) core.push(performance.now() - started);
  }
  context.close();

  const startedLoad = performance.now();
  const gateway = await startGateway({ root: tree.root, logger: silentLogger });
  const loadSeconds = (performance.now() - startedLoad) / 1000;
  const paths = serverPaths(tree.root);
  const store = createEnrollmentStore({ statePath: paths.enrollmentState, lockPath: paths.enrollmentLock });
  const enrollment = createEnrollmentService({ store });
  const { code } = await enrollment.createCode({ ttlMs: 60_000 });
  const exchanged = await enrollment.exchange(code, "bench");
  store.close();
  if (!exchanged.ok) throw new Error("enrollment failed");

  const client = new Client({ name: "ivoai-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/v1/mcp/context`), {
      requestInit: { headers: { authorization: `Bearer ${exchanged.credential}` } },
    }),
  );
  const timings: number[] = [];
  for (let i = 0; i < warmup + measured; i++) {
    const query = queries[i % queries.length] as string;
    const started = performance.now();
    const result = await client.callTool({ name: "context_search", arguments: { query, limit: 10 } });
    const elapsed = performance.now() - started;
    if (result.isError) throw new Error(`search failed: ${JSON.stringify(result.content)}`);
    if (i >= warmup) timings.push(elapsed);
  }
  await client.close();
  await gateway.close();

  const sorted = [...timings].sort((a, b) => a - b);
  const coreSorted = [...core].sort((a, b) => a - b);
  const ms = (value: number) => value.toFixed(2);
  const report = [
    "# search-latency",
    "",
    `context_search (limit 10) through /v1/mcp/context with one persistent official MCP client over loopback HTTP, ` +
      `lexical only. ${stats.chunks} chunks in ${stats.documents} documents (${(stats.bytes / 1e6).toFixed(0)} MB). ` +
      `${measured} queries (cranfield, adi and faquad query texts) after ${warmup} warm-up. ${machineLine()}, ${new Date().toISOString()}.`,
    "",
    "| path | p50 ms | p90 ms | p99 ms | max ms | target |",
    "|---|---|---|---|---|---|",
    `| MCP endpoint (client-side) | **${ms(percentile(sorted, 50))}** | ${ms(percentile(sorted, 90))} | **${ms(percentile(sorted, 99))}** | ${ms(sorted.at(-1) ?? 0)} | p50 ≤ 10 ms, p99 ≤ 50 ms |`,
    `| search core, in process | ${ms(percentile(coreSorted, 50))} | ${ms(percentile(coreSorted, 90))} | ${ms(percentile(coreSorted, 99))} | ${ms(coreSorted.at(-1) ?? 0)} | |`,
    "",
    `Gateway start including the lexical index load: ${loadSeconds.toFixed(2)} s.`,
    "",
  ].join("\n");
  process.stdout.write(`${report}\n`);
  if (!process.argv.includes("--no-save"))
    await writeFile(path.resolve("bench/results/search-latency.md"), report);
} finally {
  await tree.cleanup();
}
