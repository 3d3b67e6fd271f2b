// context_search latency through the MCP endpoint (one persistent official client) at 100k or 1M chunks, for two
// query sets (the test collections' queries, and longer agent-style questions generated from the corpus), beside
// SQLite FTS5's bm25() over the same chunks and queries and, for a run past 500k chunks, the 100k run in the same
// process: ratios to those references are what another host can check.
//
// `--chunks=N` sizes the corpus (default 100,000; `--chunks=10000000` is the 10M run, long); `--reference=M` the
// reference run (default 100,000 when N ≥ 500,000; 0 for none); `--root=DIR` keeps the server trees (corpus +
// catalogue) under DIR and reuses them on the next run, so a 1M-chunk catalogue is built once. `--queries=N` timed
// queries per set (default 1,000), `--fts5-queries=N` (default 100, 0 for none). The gateway runs in a child
// process so its start time and RSS are its own, not the ingest's.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Database from "better-sqlite3";
import { loadServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { catalogueFile, indexSnapshotFile, openContextService } from "../src/server/context/service.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import { initServer } from "../src/server/init.js";
import { words } from "../src/server/retrieval/analyzer.js";
import { ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS } from "../src/server/retrieval/stopwords.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { agentQueries } from "./lib/agent-queries.js";
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

/** Latency percentiles (ms) of one path over one query set. */
interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function percentilesOf(timings: number[]): Percentiles {
  const sorted = [...timings].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? 0,
  };
}

/** What one tree measured. */
interface TreeRun {
  chunks: number;
  documents: number;
  bytes: number;
  /** Per query set: MCP endpoint, search core in process, FTS5. */
  sets: Record<
    string,
    { mcp: Percentiles; core: Percentiles; coreLexical?: Percentiles; fts5?: Percentiles }
  >;
  gateway: GatewayReport;
  after: { rssAfterMb: number; maxRssMb: number } | undefined;
  rebuildSeconds: number;
  persistSeconds: number;
  snapshotMb: number;
  ingestSeconds: number | undefined;
}

interface RunOptions {
  measured: number;
  warmup: number;
  hybrid: boolean;
  fts5Queries: number;
  querySets: Record<string, string[]>;
}

/** The tree for `targetChunks` under `root`: made (corpus generated, ingested) unless already there. */
async function measureTree(targetChunks: number, root: string, options: RunOptions): Promise<TreeRun> {
  const paths = serverPaths(root);
  if (!existsSync(paths.configFile)) {
    await mkdir(root, { recursive: true });
    await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
  }
  // --embedder=corpus: the hybrid (the corpus embedder learned at ingest, fused with the lexical ranking). The
  // default ingest quotas (200k documents, 2M chunks, 4 GiB) would stop a 10M-chunk run at 2M: raised to fit.
  const toml = await readFile(paths.configFile, "utf8");
  let edited = options.hybrid ? toml.replace('provider = "none"', 'provider = "corpus"') : toml;
  if (targetChunks > 2_000_000)
    edited = edited
      .replace(/^max_documents = \d+$/m, `max_documents = ${Math.ceil(targetChunks / 10)}`)
      .replace(/^max_chunks = \d+$/m, `max_chunks = ${Math.ceil(targetChunks * 1.2)}`)
      .replace(/^max_bytes = "4GiB"$/m, 'max_bytes = "64GiB"');
  if (edited !== toml) await writeFile(paths.configFile, edited);
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
  const { warmup, measured } = options;
  const cores: Record<string, Pick<TreeRun["sets"][string], "core" | "coreLexical">> = {};
  for (const [name, queries] of Object.entries(options.querySets)) {
    const core: number[] = [];
    // With the hybrid, the same index searched lexical-only in the same loop: the vector side's cost beside it.
    const coreLexical: number[] = [];
    for (let i = 0; i < warmup + measured; i++) {
      const query = queries[i % queries.length] as string;
      const started = performance.now();
      await context.searcher.search(query, { limit: 10 });
      if (i >= warmup) core.push(performance.now() - started);
      if (!options.hybrid) continue;
      const startedLexical = performance.now();
      await context.searcher.search(query, { limit: 10, mode: "lexical" });
      if (i >= warmup) coreLexical.push(performance.now() - startedLexical);
    }
    cores[name] = {
      core: percentilesOf(core),
      ...(options.hybrid ? { coreLexical: percentilesOf(coreLexical) } : {}),
    };
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
  const mcps: Record<string, Percentiles> = {};
  for (const [name, queries] of Object.entries(options.querySets)) {
    const timings: number[] = [];
    for (let i = 0; i < warmup + measured; i++) {
      const query = queries[i % queries.length] as string;
      const started = performance.now();
      const result = await client.callTool({ name: "context_search", arguments: { query, limit: 10 } });
      const elapsed = performance.now() - started;
      if (result.isError) throw new Error(`search failed: ${JSON.stringify(result.content)}`);
      if (i >= warmup) timings.push(elapsed);
    }
    mcps[name] = percentilesOf(timings);
  }
  await client.close();
  child.stdin.end();
  const last = await lines.next();
  const after = last.done ? undefined : (JSON.parse(last.value) as { rssAfterMb: number; maxRssMb: number });
  await new Promise((resolve) => child.once("exit", resolve));
  // FTS5 last: its table is as large again as the catalogue, and building it would push the snapshot the gateway
  // start reads out of the page cache.
  const fts5 =
    options.fts5Queries > 0 ? await fts5Latency(paths, options.querySets, options.fts5Queries) : {};
  const sets: TreeRun["sets"] = {};
  for (const name of Object.keys(options.querySets)) {
    const figures = fts5[name];
    sets[name] = {
      ...(cores[name] as (typeof cores)[string]),
      mcp: mcps[name] as Percentiles,
      ...(figures ? { fts5: figures } : {}),
    };
  }
  return {
    chunks: stats.chunks,
    documents: stats.documents,
    bytes: stats.bytes,
    sets,
    gateway,
    after,
    rebuildSeconds,
    persistSeconds,
    snapshotMb,
    ingestSeconds,
  };
}

/**
 * FTS5's bm25() over the same chunks (copied into an FTS5 table of a scratch file beside the catalogue, kept for
 * the next run) and the first `count` queries of each set: the query's words but stopwords, OR-ed, top 10.
 */
async function fts5Latency(
  paths: ReturnType<typeof serverPaths>,
  querySets: Record<string, string[]>,
  count: number,
): Promise<Record<string, Percentiles>> {
  const file = path.join(paths.contextDir, "..", "bench-fts5.sqlite");
  const db = new Database(file);
  try {
    const built = db.prepare("SELECT name FROM sqlite_master WHERE name = 'chunks_fts'").get();
    if (!built) {
      db.exec("CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')");
      db.prepare("ATTACH DATABASE ? AS catalogue").run(catalogueFile(paths));
      db.exec("INSERT INTO chunks_fts (rowid, text) SELECT seq, text FROM catalogue.chunks");
      db.exec("DETACH DATABASE catalogue");
    }
    const search = db.prepare(
      "SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score LIMIT 10",
    );
    const out: Record<string, Percentiles> = {};
    for (const [name, queries] of Object.entries(querySets)) {
      const timings: number[] = [];
      for (const query of queries.slice(0, count)) {
        const terms = [
          ...new Set(words(query).filter((w) => !ENGLISH_STOPWORDS.has(w) && !PORTUGUESE_STOPWORDS.has(w))),
        ];
        if (terms.length === 0) continue;
        const started = performance.now();
        search.all(terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" OR "));
        timings.push(performance.now() - started);
      }
      out[name] = percentilesOf(timings);
    }
    return out;
  } finally {
    db.close();
  }
}

const ms = (value: number) => value.toFixed(2);
const ratio = (value: number, reference: number | undefined) =>
  reference && reference > 0 ? `${(value / reference).toFixed(2)}×` : "";

async function main(): Promise<void> {
  const targetChunks = Number(arg("chunks") ?? "100000");
  const referenceChunks = Number(arg("reference") ?? (targetChunks >= 500_000 ? "100000" : "0"));
  const keptRoot = arg("root");
  const options: RunOptions = {
    measured: Number(arg("queries") ?? "1000"),
    warmup: 200,
    hybrid: arg("embedder") === "corpus",
    fts5Queries: Number(arg("fts5-queries") ?? "100"),
    querySets: {
      collections: ["cranfield", "adi", "faquad"].flatMap((name) =>
        loadCollection(name).queries.map((query) => query.text),
      ),
      agent: agentQueries(500),
    },
  };
  const tree = keptRoot ? undefined : await createBenchTree("latency");
  const base = keptRoot ? path.resolve(keptRoot) : (tree?.root as string);
  // A kept root from before this bench measured two trees holds one tree at its top: it is the main one.
  const rootFor = (chunks: number) =>
    keptRoot && chunks === targetChunks && existsSync(path.join(base, "etc"))
      ? base
      : path.join(base, `chunks-${chunks}`);
  try {
    const reference =
      referenceChunks > 0 ? await measureTree(referenceChunks, rootFor(referenceChunks), options) : undefined;
    const run = await measureTree(targetChunks, rootFor(targetChunks), options);
    const report = reportOf(run, reference, options);
    process.stdout.write(`${report}\n`);
    if (!process.argv.includes("--no-save")) {
      const million = run.chunks >= 500_000;
      const name = `search-latency${million ? (run.chunks >= 5_000_000 ? "-10m" : "-1m") : ""}${options.hybrid ? "-corpus" : ""}.md`;
      await writeFile(path.resolve("bench/results", name), report);
    }
  } finally {
    await tree?.cleanup();
  }
}

/** A report row: label, figures, the reference run's, FTS5's, goal. */
type ReportPath = [string, Percentiles, Percentiles | undefined, Percentiles | undefined, string];

function reportOf(run: TreeRun, reference: TreeRun | undefined, options: RunOptions): string {
  const million = run.chunks >= 500_000;
  const mcpGoal = million ? "p99 ≤ 2× the 100k run's, p50 ≤ 1.5×" : "p50 ≤ 5 ms, p99 ≤ 20 ms";
  const size = (tree: TreeRun) => `${(tree.chunks / 1000).toFixed(0)}k chunks`;
  const rows: string[] = [];
  for (const [name, set] of Object.entries(run.sets)) {
    const ref = reference?.sets[name];
    const paths: ReportPath[] = [
      ["MCP endpoint (client-side)", set.mcp, ref?.mcp, set.fts5, mcpGoal],
      ["search core, in process", set.core, ref?.core, set.fts5, ""],
      ...(set.coreLexical
        ? [
            [
              "search core, lexical only (same index, same loop)",
              set.coreLexical,
              ref?.coreLexical,
              set.fts5,
              "reference",
            ] as ReportPath,
          ]
        : []),
    ];
    for (const [label, figures, refFigures, fts5, goal] of paths) {
      const vsRef = refFigures
        ? `${ratio(figures.p50, refFigures.p50)} / **${ratio(figures.p99, refFigures.p99)}**`
        : "";
      const vsFts5 = fts5 ? `${ratio(fts5.p50, figures.p50)} / ${ratio(fts5.p99, figures.p99)}` : "";
      rows.push(
        `| ${name} | ${label} | ${vsRef} | ${vsFts5} | **${ms(figures.p50)}** / ${ms(figures.p90)} / **${ms(figures.p99)}** / ${ms(figures.max)} | ${refFigures ? `${ms(refFigures.p50)} / ${ms(refFigures.p99)}` : ""} | ${goal} |`,
      );
    }
    if (set.fts5)
      rows.push(
        `| ${name} | SQLite FTS5 bm25(), same chunks, first ${options.fts5Queries} queries | | 1× | ${ms(set.fts5.p50)} / ${ms(set.fts5.p90)} / ${ms(set.fts5.p99)} / ${ms(set.fts5.max)} | ${ref?.fts5 ? `${ms(ref.fts5.p50)} / ${ms(ref.fts5.p99)}` : ""} | reference |`,
      );
  }
  const memoryRows = (tree: TreeRun) => [
    `| ${size(tree)}: gateway start, index loaded from its snapshot (the one "server ingest" leaves) | **${tree.gateway.startSeconds.toFixed(2)} s** | ${tree.chunks >= 500_000 ? "≤ 5 s at 1M chunks" : ""} |`,
    `| ${size(tree)}: gateway RSS after start (after GC) | **${tree.gateway.rssMb.toFixed(0)} MB** (JS heap ${tree.gateway.heapMb.toFixed(0)} MB, typed arrays ${tree.gateway.externalMb.toFixed(0)} MB: **${((tree.gateway.externalMb * 1024 * 1024) / tree.chunks).toFixed(0)} B a chunk**) | ${tree.chunks >= 500_000 ? "≤ 2 GB at 1M chunks; ≤ 600 B a chunk" : ""} |`,
    `| ${size(tree)}: gateway RSS after the queries / peak | ${tree.after ? `${tree.after.rssAfterMb.toFixed(0)} MB / ${tree.after.maxRssMb.toFixed(0)} MB` : "n/a"} | |`,
    `| ${size(tree)}: index rebuild from the catalogue (no snapshot), in process | ${tree.rebuildSeconds.toFixed(2)} s | ${tree.chunks >= 500_000 ? "≤ 20 s at 1M" : ""} |`,
    `| ${size(tree)}: snapshot write (the last step of every "server ingest") | ${tree.persistSeconds.toFixed(2)} s, ${tree.snapshotMb.toFixed(0)} MB | |`,
    ...(tree.ingestSeconds !== undefined
      ? [`| ${size(tree)}: ingest (this run) | ${tree.ingestSeconds.toFixed(1)} s | |`]
      : []),
  ];
  return [
    "# search-latency",
    "",
    `context_search (limit 10) through /v1/mcp/context with one persistent official MCP client over loopback HTTP, ` +
      `${options.hybrid ? "hybrid: lexical fused with the corpus embedder (LSA, defaults)" : "lexical only"}. ${run.chunks} chunks in ${run.documents} documents (${(run.bytes / 1e6).toFixed(0)} MB)` +
      `${reference ? `, beside a ${reference.chunks}-chunk tree measured the same way in the same run` : ""}. ` +
      `Query sets: "collections" (cranfield, adi and faquad query texts) and "agent" (questions of 8–25 words generated from the corpus's sentences, bench/lib/agent-queries.ts); ` +
      `${options.measured} queries per set after ${options.warmup} warm-up. The gateway runs in its own process. ${machineLine()}, ${new Date().toISOString()}.`,
    "",
    "Ratios first (another host of this kind should reproduce them); absolute times are on this host. p50 / p90 / p99 / max in ms.",
    "",
    `| queries | path | ${reference ? `vs ${size(reference)} (p50 / p99)` : "vs smaller run"} | FTS5 time ÷ this (p50 / p99) | on this host, ms | ${reference ? `${size(reference)}, ms (p50 / p99)` : "reference, ms"} | goal |`,
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
    "| start and memory | value | goal |",
    "|---|---|---|",
    ...(reference ? memoryRows(reference) : []),
    ...memoryRows(run),
    "",
  ].join("\n");
}

const childRoot = arg("gateway-child");
await (childRoot ? gatewayChild(childRoot) : main());
