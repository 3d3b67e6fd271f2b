// context_search latency through the MCP endpoint (one persistent official client) at 100k or 1M chunks.
//
// `--chunks=N` sizes the corpus (default 100,000); `--root=DIR` keeps the server tree (corpus + catalogue) in DIR
// and reuses it on the next run, so a 1M-chunk catalogue is built once. The gateway runs in a child process so its
// start time and RSS are its own, not the ingest's.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { indexSnapshotFile, openContextService } from "../src/server/context/service.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import { initServer } from "../src/server/init.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { generateCorpus } from "./lib/corpus.js";
import { loadCollection, percentile } from "./lib/ir.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const arg = (name: string) =>
  process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3);

interface GatewayReport {
  url: string;
  startSeconds: number;
  rssMb: number;
  heapMb: number;
  externalMb: number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** Child mode: start the gateway on `root`, print one JSON line, serve until stdin closes. */
async function gatewayChild(root: string): Promise<void> {
  const started = performance.now();
  const gateway = await startGateway({ root, logger: silentLogger });
  const startSeconds = (performance.now() - started) / 1000;
  gc();
  const usage = process.memoryUsage();
  const report: GatewayReport = {
    url: gateway.url,
    startSeconds,
    rssMb: mb(usage.rss),
    heapMb: mb(usage.heapUsed),
    externalMb: mb(usage.arrayBuffers),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.on("end", resolve));
  const after = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ rssAfterMb: mb(after.rss), maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
  await gateway.close();
}

async function main(): Promise<void> {
  const targetChunks = Number(arg("chunks") ?? "100000");
  const measured = Number(arg("queries") ?? "2000");
  const warmup = 200;
  const keptRoot = arg("root");
  const hybrid = arg("embedder") === "corpus";

  const tree = keptRoot ? undefined : await createBenchTree("latency");
  const root = keptRoot ? path.resolve(keptRoot) : (tree?.root as string);
  try {
    const paths = serverPaths(root);
    if (!existsSync(paths.configFile)) {
      await mkdir(root, { recursive: true });
      await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
    }
    // --embedder=corpus: the hybrid (the corpus embedder learned at ingest, fused with the lexical ranking).
    if (hybrid) {
      const toml = await readFile(paths.configFile, "utf8");
      await writeFile(paths.configFile, toml.replace('provider = "none"', 'provider = "corpus"'));
    }
    const open = async () =>
      openContextService({
        paths,
        config: await loadServerConfig(paths.configFile),
        logger: silentLogger,
        workerEntry: path.resolve("dist/ivoai.mjs"),
      });
    let context = await open();
    let stats = await context.catalogue.stats();
    let ingestSeconds: number | undefined;
    if (stats.chunks < targetChunks * 0.95) {
      // ~20.7 chunks per 16 kB document with the default chunk policy.
      const corpusDir = path.join(root, "corpus");
      await rm(corpusDir, { recursive: true, force: true });
      const corpus = await generateCorpus(corpusDir, Math.ceil(targetChunks / 20.7), 16_000);
      if (!(await context.catalogue.getConnector("bench")))
        await context.addConnector({ name: "bench", type: "filesystem", path: corpus.dir });
      const started = performance.now();
      await context.ingest(["bench"]);
      ingestSeconds = (performance.now() - started) / 1000;
      stats = await context.catalogue.stats();
    }
    const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
      loadCollection(name).queries.map((query) => query.text),
    );

    // The search core alone, in process, to tell retrieval cost from MCP + HTTP overhead. Its first refresh
    // rebuilds the index from the catalogue (the snapshot is removed first) and writes a fresh snapshot.
    const snapshot = indexSnapshotFile(paths);
    await rm(snapshot, { force: true });
    await context.close();
    context = await open();
    const startedRebuild = performance.now();
    await context.searcher.refresh();
    const rebuildSeconds = (performance.now() - startedRebuild) / 1000;
    const startedPersist = performance.now();
    await context.searcher.persist();
    const persistSeconds = (performance.now() - startedPersist) / 1000;
    const snapshotMb = existsSync(snapshot) ? mb((await stat(snapshot)).size) : 0;
    const core: number[] = [];
    // With the hybrid, the same index searched lexical-only in the same loop: the vector side's cost beside it.
    const coreLexical: number[] = [];
    for (let i = 0; i < warmup + measured; i++) {
      const query = queries[i % queries.length] as string;
      const started = performance.now();
      await context.searcher.search(query, { limit: 10 });
      if (i >= warmup) core.push(performance.now() - started);
      if (!hybrid) continue;
      const startedLexical = performance.now();
      await context.searcher.search(query, { limit: 10, mode: "lexical" });
      if (i >= warmup) coreLexical.push(performance.now() - startedLexical);
    }
    await context.close();
    context = undefined as never;
    gc();

    const script = process.argv[1] as string;
    // --profile=DIR: the gateway writes a CPU profile there when it stops.
    const profile = arg("profile");
    const profiling = profile ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`] : [];
    const child = spawn(process.execPath, [...profiling, "--expose-gc", script, `--gateway-child=${root}`], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.done) throw new Error("the gateway child exited before reporting");
    const gateway = JSON.parse(first.value) as GatewayReport;

    const store = await openServerEnrollmentStore(paths);
    const enrollment = createEnrollmentService({ store });
    const { code } = await enrollment.createCode({ ttlMs: 60_000 });
    const exchanged = await enrollment.exchange(code, "bench");
    await store.close();
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
    child.stdin.end();
    const last = await lines.next();
    const after = last.done
      ? undefined
      : (JSON.parse(last.value) as { rssAfterMb: number; maxRssMb: number });
    await new Promise((resolve) => child.once("exit", resolve));

    const sorted = [...timings].sort((a, b) => a - b);
    const coreSorted = [...core].sort((a, b) => a - b);
    const ms = (value: number) => value.toFixed(2);
    const million = stats.chunks >= 500_000;
    const mcpGoal = million ? "p50 ≤ 20 ms" : "p50 ≤ 5 ms, p99 ≤ 20 ms";
    const report = [
      "# search-latency",
      "",
      `context_search (limit 10) through /v1/mcp/context with one persistent official MCP client over loopback HTTP, ` +
        `${hybrid ? "hybrid: lexical fused with the corpus embedder (LSA, defaults)" : "lexical only"}. ${stats.chunks} chunks in ${stats.documents} documents (${(stats.bytes / 1e6).toFixed(0)} MB). ` +
        `${measured} queries (cranfield, adi and faquad query texts) after ${warmup} warm-up. The gateway runs in ` +
        `its own process. ${machineLine()}, load average ${loadavg()[1]?.toFixed(1)} (5 min) at the end, ${new Date().toISOString()}.`,
      "",
      "| path | p50 ms | p90 ms | p99 ms | max ms | goal |",
      "|---|---|---|---|---|---|",
      `| MCP endpoint (client-side) | **${ms(percentile(sorted, 50))}** | ${ms(percentile(sorted, 90))} | **${ms(percentile(sorted, 99))}** | ${ms(sorted.at(-1) ?? 0)} | ${mcpGoal} |`,
      `| search core, in process | ${ms(percentile(coreSorted, 50))} | ${ms(percentile(coreSorted, 90))} | ${ms(percentile(coreSorted, 99))} | ${ms(coreSorted.at(-1) ?? 0)} | |`,
      ...(hybrid
        ? (() => {
            const lexicalSorted = [...coreLexical].sort((a, b) => a - b);
            return [
              `| search core, in process, lexical only (same index, same loop) | ${ms(percentile(lexicalSorted, 50))} | ${ms(percentile(lexicalSorted, 90))} | ${ms(percentile(lexicalSorted, 99))} | ${ms(lexicalSorted.at(-1) ?? 0)} | reference |`,
            ];
          })()
        : []),
      "",
      "| start and memory | value | goal |",
      "|---|---|---|",
      `| gateway start, index loaded from its snapshot (the one "server ingest" leaves) | **${gateway.startSeconds.toFixed(2)} s** | ${million ? "≤ 5 s at 1M chunks" : ""} |`,
      `| gateway RSS after start (after GC) | **${gateway.rssMb.toFixed(0)} MB** (JS heap ${gateway.heapMb.toFixed(0)} MB, typed arrays ${gateway.externalMb.toFixed(0)} MB) | ${million ? "≤ 2 GB at 1M chunks" : ""} |`,
      `| gateway RSS after the queries / peak | ${after ? `${after.rssAfterMb.toFixed(0)} MB / ${after.maxRssMb.toFixed(0)} MB` : "n/a"} | |`,
      `| index rebuild from the catalogue (no snapshot), in process: the first "server ingest" ends with it | ${rebuildSeconds.toFixed(2)} s | |`,
      `| snapshot write (the last step of every "server ingest") | ${persistSeconds.toFixed(2)} s, ${snapshotMb.toFixed(0)} MB | |`,
      ...(ingestSeconds !== undefined ? [`| ingest (this run) | ${ingestSeconds.toFixed(1)} s | |`] : []),
      "",
    ].join("\n");
    process.stdout.write(`${report}\n`);
    if (!process.argv.includes("--no-save")) {
      const name = `search-latency${million ? "-1m" : ""}${hybrid ? "-corpus" : ""}.md`;
      await writeFile(path.resolve("bench/results", name), report);
    }
  } finally {
    await tree?.cleanup();
  }
}

const childRoot = arg("gateway-child");
await (childRoot ? gatewayChild(childRoot) : main());
