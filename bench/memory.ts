// memory_query quality (evidence recall@5/@10 on FriendsQA, recall@10 on FaQuAD) beside stock BM25 in the same run, and its latency at
// 500,000 pages (`--pages=N`) through /v1/memory/mcp with one persistent official MCP client, with the gateway's
// start time and resident memory, and the in-process split (memory_query without HTTP, the bare lexical index).
// The seeded store is cached under the temp dir (`--fresh` reseeds): seeding 500,000 pages takes minutes.
// `--ab=<git revision>` times memory_query of this tree against that revision instead: both gateways built and
// started as child processes, each on its own copy of the same seeded store, the same queries sent to them in
// alternating rounds (`--rounds=N`) through the official MCP client, so the machine's load hits both alike.
import { copyFile, rm, stat, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import { preparePageWrite } from "../src/server/memory/page-write.js";
import { createMemoryIndex, createMemorySearcher } from "../src/server/memory/query.js";
import { memoryFile, memoryIndexSnapshotFile, openMemoryService } from "../src/server/memory/service.js";
import { type MemoryStore, openMemoryStore, type PageWrite } from "../src/server/memory/store.js";
import { analyzeQuery, analyzeWithOffsets } from "../src/server/retrieval/analyzer.js";
import { createLexicalIndex, DEFAULT_LEXICAL_PARAMS } from "../src/server/retrieval/lexical-index.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { agentQueries } from "./lib/agent-queries.js";
import {
  episodeScope,
  loadConversationSet,
  plainUtterancePage,
  type Utterance,
  utterancePage,
  utterancePath,
} from "./lib/friendsqa.js";
import { loadCollection, mean, percentile } from "./lib/ir.js";
import { lsaFusionRecall } from "./lib/memory-lsa.js";
import { seededMemoryStore } from "./lib/memory-seed.js";
import { hybridLatency, timeAfterWrites } from "./lib/memory-vectors.js";
import { cpuMsOf } from "./lib/proc-cpu.js";
import {
  type BuiltRevision,
  buildRevision,
  currentRevision,
  runBin,
  startRevisionServer,
} from "./lib/revision-build.js";
import { createBenchTree, machineLine, serverInitArgs } from "./lib/server-tree.js";

const pagesForLatency = Number(process.argv.find((arg) => arg.startsWith("--pages="))?.slice(8) ?? "500000");
const measured = Number(process.argv.find((arg) => arg.startsWith("--queries="))?.slice(10) ?? "1000");
// --reference-pages=N (default 50,000 when the run is larger; 0 for none): the same queries on a smaller store.
const referencePages = Number(
  process.argv.find((arg) => arg.startsWith("--reference-pages="))?.slice(18) ??
    (pagesForLatency > 50_000 ? "50000" : "0"),
);
const WARM_UP = 200;
const abRevision = process.argv.find((arg) => arg.startsWith("--ab="))?.slice(5);
const abRounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "10");

/** Stock BM25 (Lucene's k1 0.9, b 0.4, same analyser, no feedback or proximity). */
const STOCK_BM25 = { ...DEFAULT_LEXICAL_PARAMS, k1: 0.9, b: 0.4, feedbackDocs: 0, proximityWeight: 0 };

/**
 * The half of the question set a query falls in (FNV-1a of its id, "A" even, "B" odd): changes to the ranking are
 * chosen looking at half A, and count only if half B gains too.
 */
export const halfOf = (id: string): "A" | "B" => {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % 2 === 0 ? "A" : "B";
};

const meanOfHalf = (values: readonly number[], halves: readonly ("A" | "B")[], half: "A" | "B") =>
  mean(values.filter((_, i) => halves[i] === half));

const recallAt = (ranked: readonly string[], relevant: ReadonlyMap<string, number>, k = 10) =>
  relevant.size === 0 ? 0 : ranked.slice(0, k).filter((id) => relevant.has(id)).length / relevant.size;

/**
 * FriendsQA as memory pages, memory_query in the question's episode beside stock BM25 (one index per episode).
 * Each episode has a memory store of its own, as each of the stock indexes; `shared` puts every episode in one
 * store, a scope each (what a gateway holding many projects' memory does: statistics across all of them).
 */
async function conversations(
  shared: boolean,
  pageOf: (utterance: Utterance) => PageWrite = utterancePage,
  /** On the shared store: memory_query fused with the corpus embedder's ranking at these weights (memory-lsa.ts). */
  lsaWeights: readonly number[] = [],
) {
  const set = loadConversationSet();
  const tree = await createBenchTree("memory-friendsqa");
  const stores = new Map<string, MemoryStore>();
  const storeOf = async (project: string) => {
    const name = shared ? "all" : project;
    let store = stores.get(name);
    if (!store) {
      store = await openMemoryStore(path.join(tree.root, `${name}.sqlite`));
      stores.set(name, store);
    }
    return store;
  };
  try {
    const at = new Date().toISOString();
    for (const project of new Set(set.utterances.map((utterance) => utterance.project))) {
      const pages = set.utterances.filter((utterance) => utterance.project === project).map(pageOf);
      await (await storeOf(project)).writePages(pages, at);
    }
    const searchers = new Map([...stores].map(([name, store]) => [name, createMemorySearcher(store)]));
    const idOf = new Map(
      set.utterances.map((utterance) => [
        `${episodeScope(utterance.project)}\0${utterancePath(utterance)}`,
        utterance.id,
      ]),
    );
    const ours = { r5: [] as number[], r10: [] as number[] };
    const halves = set.queries.map((query) => halfOf(query.id));
    for (const query of set.queries) {
      const searcher = searchers.get(shared ? "all" : query.project);
      const hits = (await searcher?.search(query.text, [episodeScope(query.project)], 10)) ?? [];
      const ranked = hits.map((hit) => idOf.get(`${hit.page.scope}\0${hit.page.path}`) ?? "");
      const relevant = new Map(query.evidence.map((id) => [id, 1]));
      ours.r5.push(recallAt(ranked, relevant, 5));
      ours.r10.push(recallAt(ranked, relevant, 10));
    }
    // Stock BM25 over the same "Speaker: text", one index per episode.
    const stock = new Map<string, ReturnType<typeof createLexicalIndex>>();
    for (const [key, utterance] of set.utterances.entries()) {
      let index = stock.get(utterance.project);
      if (!index) {
        index = createLexicalIndex(STOCK_BM25);
        stock.set(utterance.project, index);
      }
      index.add(key, analyzeWithOffsets(`${utterance.speaker}: ${utterance.text}`).terms);
    }
    const reference = { r5: [] as number[], r10: [] as number[] };
    for (const query of set.queries) {
      const ranked = (stock.get(query.project)?.search(analyzeQuery(query.text), { limit: 10 }) ?? []).map(
        (hit) => set.utterances[hit.key]?.id ?? "",
      );
      const relevant = new Map(query.evidence.map((id) => [id, 1]));
      reference.r5.push(recallAt(ranked, relevant, 5));
      reference.r10.push(recallAt(ranked, relevant, 10));
    }
    const sharedStore = stores.get("all");
    const sharedSearcher = searchers.get("all");
    const lsa =
      sharedStore && sharedSearcher && lsaWeights.length > 0
        ? await lsaFusionRecall(set, sharedStore, sharedSearcher, lsaWeights)
        : [];
    return {
      pages: set.utterances.length,
      queries: set.queries.length,
      lsa,
      recall5: mean(ours.r5),
      recall10: mean(ours.r10),
      stock5: mean(reference.r5),
      stock10: mean(reference.r10),
      halves: (["A", "B"] as const).map((half) => ({
        half,
        queries: halves.filter((value) => value === half).length,
        recall10: meanOfHalf(ours.r10, halves, half),
        stock10: meanOfHalf(reference.r10, halves, half),
      })),
    };
  } finally {
    for (const store of stores.values()) await store.close();
    await tree.cleanup();
  }
}

async function quality() {
  const collection = loadCollection("faquad");
  const tree = await createBenchTree("memory-quality");
  const paths = serverPaths(tree.root);
  const memory = await openMemoryService({
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
    const stock = createLexicalIndex(STOCK_BM25);
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
    await memory.close();
    await tree.cleanup();
  }
}

const rssMiB = () => {
  globalThis.gc?.();
  return process.memoryUsage().rss / 2 ** 20;
};

const summary = (timings: number[]) => {
  const sorted = [...timings].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
};

/** Seconds until `done` says so, asked every 20 ms (for at most 10 minutes). */
async function secondsUntil(done: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await done())) {
    if (performance.now() - started > 600_000) throw new Error("gave up waiting after 10 minutes");
    await delay(20);
  }
  return (performance.now() - started) / 1000;
}

/** A gateway started on `root`: seconds until it listens, and until /ready says ready (memory loaded). */
async function timedStart(root: string) {
  const started = performance.now();
  const gateway = await startGateway({ root, logger: silentLogger });
  const listening = (performance.now() - started) / 1000;
  await secondsUntil(async () => {
    const ready = (await (await fetch(`${gateway.url}/ready`)).json()) as { status: string };
    return ready.status === "ready";
  });
  return { gateway, listening, ready: (performance.now() - started) / 1000 };
}

/**
 * The first start on a tree (no snapshot): its times, and how long after it was ready its snapshot took to be
 * written. Only numbers are returned, so that its gateway's index is garbage once it is closed.
 */
async function firstStart(root: string, snapshot: string) {
  const { gateway, listening, ready } = await timedStart(root);
  const snapshotSeconds = await secondsUntil(
    async () => (await stat(snapshot).catch(() => undefined)) !== undefined,
  );
  await gateway.close();
  return {
    cold: { listening, ready },
    snapshotSeconds,
    snapshotMiB: (await stat(snapshot)).size / 1024 / 1024,
  };
}

/** An official MCP client of /v1/memory/mcp on the gateway at `url`, enrolled with a fresh code, in project-3. */
async function memoryClient(paths: ReturnType<typeof serverPaths>, url: string): Promise<Client> {
  const store = await openServerEnrollmentStore(paths);
  const { code } = await createEnrollmentService({ store }).createCode({ ttlMs: 60_000 });
  const exchanged = await createEnrollmentService({ store }).exchange(code, "bench");
  await store.close();
  if (!exchanged.ok) throw new Error("enrollment failed");
  const client = new Client({ name: "ivoai-bench", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/v1/memory/mcp`), {
      requestInit: {
        headers: { authorization: `Bearer ${exchanged.credential}`, "x-ivoai-project": "project-3" },
      },
    }),
  );
  return client;
}

/** memory_query through MCP over `set` (cycled), after the warm-up: each call's ms. */
async function mcpTimings(client: Client, set: readonly string[]): Promise<number[]> {
  const timings: number[] = [];
  for (let i = 0; i < WARM_UP + measured; i++) {
    const begin = performance.now();
    const result = await client.callTool({
      name: "memory_query",
      arguments: { query: set[i % set.length], limit: 10 },
    });
    if (result.isError) throw new Error(JSON.stringify(result.content));
    if (i >= WARM_UP) timings.push(performance.now() - begin);
  }
  return timings;
}

/** memory_query's searcher in process over `set` (cycled), in the caller's scopes, after the warm-up. */
async function searcherTimings(
  searcher: ReturnType<typeof createMemorySearcher>,
  set: readonly string[],
): Promise<number[]> {
  const timings: number[] = [];
  for (let i = 0; i < WARM_UP + measured; i++) {
    const begin = performance.now();
    await searcher.search(set[i % set.length] as string, ["project-3", "_global"], 10);
    if (i >= WARM_UP) timings.push(performance.now() - begin);
  }
  return timings;
}

/** The tree's memory opened in this process, its index loaded, and memory_query's searcher over it. */
async function inProcessSearcher(paths: ReturnType<typeof serverPaths>) {
  const memory = await openMemoryService({
    paths,
    config: await loadServerConfig(paths.configFile),
    logger: silentLogger,
  });
  const index = createMemoryIndex(memory.store);
  await index.refresh();
  return { memory, index, searcher: createMemorySearcher(memory.store, index) };
}

/**
 * memory_query at `pages` (a smaller store, seeded the same way) through MCP and in process, for both query sets:
 * the reference the full run's figures are divided by (how latency grows with the store).
 */
async function referenceLatency(pages: number, queries: readonly string[], agentSet: readonly string[]) {
  const seed = await seededMemoryStore(pages, { fresh: process.argv.includes("--fresh") });
  const tree = await createBenchTree("memory-reference");
  const paths = serverPaths(tree.root);
  try {
    await copyFile(seed.file, memoryFile(paths));
    await firstStart(tree.root, memoryIndexSnapshotFile(paths));
    const { gateway } = await timedStart(tree.root);
    const client = await memoryClient(paths, gateway.url);
    const mcp = summary(await mcpTimings(client, queries));
    const mcpAgent = summary(await mcpTimings(client, agentSet));
    await client.close();
    await gateway.close();
    const { memory, searcher: searcherInProcess } = await inProcessSearcher(paths);
    const searcher = summary(await searcherTimings(searcherInProcess, queries));
    const searcherAgent = summary(await searcherTimings(searcherInProcess, agentSet));
    await memory.close();
    return { pages, mcp, mcpAgent, searcher, searcherAgent };
  } finally {
    await tree.cleanup();
  }
}

async function latency() {
  const seed = await seededMemoryStore(pagesForLatency, { fresh: process.argv.includes("--fresh") });
  const tree = await createBenchTree("memory-latency");
  const paths = serverPaths(tree.root);
  await copyFile(seed.file, memoryFile(paths));
  const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
    loadCollection(name).queries.map((query) => query.text),
  );
  // Questions of 8–25 words as agents send them, generated from the test collections' sentences.
  const agentSet = agentQueries(500);
  const reference =
    referencePages > 0 ? await referenceLatency(referencePages, queries, agentSet) : undefined;

  const rssBefore = rssMiB();
  // The first start has no snapshot of the memory index: it reads every page (in the background once the start's
  // grace has passed: context is served meanwhile), then writes one, which the second start loads.
  const { cold, snapshotSeconds, snapshotMiB } = await firstStart(tree.root, memoryIndexSnapshotFile(paths));
  const warm = await timedStart(tree.root);
  const { gateway } = warm;
  const rssStarted = rssMiB();
  const client = await memoryClient(paths, gateway.url);
  const mcp = await mcpTimings(client, queries);
  const mcpAgent = await mcpTimings(client, agentSet);
  const rssServed = rssMiB();
  await client.close();
  await gateway.close();

  // The same queries in process: memory_query's searcher (no HTTP, MCP or JSON), then the bare lexical index
  // over the same pages (what the searcher adds is the scope filter, page reads, feedback, graph and snippets).
  const { memory, index, searcher: searcherInProcess } = await inProcessSearcher(paths);
  const searcher = await searcherTimings(searcherInProcess, queries);
  const searcherAgent = await searcherTimings(searcherInProcess, agentSet);
  const core: number[] = [];
  for (let i = 0; i < WARM_UP + measured; i++) {
    const begin = performance.now();
    index.search(analyzeQuery(queries[i % queries.length] as string, index.languages()), { limit: 50 });
    if (i >= WARM_UP) core.push(performance.now() - begin);
  }
  // A query right after each write pays the index's refresh (tombstones, new rows, languages) on top; the same
  // query repeated with no write between is its control.
  const { afterWrite, repeated } = await timeAfterWrites(memory.store, queries, {
    writes: 100,
    scope: "project-3",
    paths: (i) => `notes/fresh/page-${i % 20}`,
    search: (query) => searcherInProcess.search(query, ["project-3", "_global"], 10),
  });
  const vectors = await hybridLatency(
    memory.store,
    index,
    queries,
    { warmUp: WARM_UP, measured, writes: 50 },
    ["project-3", "_global"],
  );
  await memory.close();
  await tree.cleanup();
  return {
    seed,
    vectors: {
      ...vectors,
      hybrid: summary(vectors.hybrid),
      scan: summary(vectors.scan),
      afterWrite: summary(vectors.afterWrite),
      repeated: summary(vectors.repeated),
    },
    afterWrite: summary(afterWrite),
    repeated: summary(repeated),
    reference,
    mcp: summary(mcp),
    mcpAgent: summary(mcpAgent),
    searcher: summary(searcher),
    searcherAgent: summary(searcherAgent),
    core: summary(core),
    starts: { cold, warm, snapshotSeconds, snapshotMiB },
    rss: { before: rssBefore, started: rssStarted, served: rssServed },
  };
}

/** The report's line on where the 500,000-page store came from. */
function seedLine(seed: { seeded: boolean; seconds: number }): string {
  return seed.seeded
    ? `Seeding ${pagesForLatency.toLocaleString("en")} pages through the store's write path (5,000 per transaction): ${seed.seconds.toFixed(0)} s.`
    : "The seeded store came from the cache of an earlier run (same seed, same write path).";
}

/** Prints the report and, unless `--no-save`, keeps it as bench/results/memory.md. */
async function publish(report: string): Promise<void> {
  process.stdout.write(`${report}\n`);
  if (!process.argv.includes("--no-save")) await writeFile(path.resolve("bench/results/memory.md"), report);
}

/** A gateway of one revision on a server tree of its own, holding a copy of the seeded store. */
async function abGateway(revision: BuiltRevision, seedFile: string, root: string) {
  await runBin(revision.bin, serverInitArgs(root));
  const file = memoryFile(serverPaths(root));
  for (const suffix of ["-wal", "-shm"]) await rm(`${file}${suffix}`, { force: true });
  await copyFile(seedFile, file);
  const server = await startRevisionServer(revision.bin, root);
  try {
    const { code } = JSON.parse(
      await runBin(revision.bin, ["server", "enrollment", "create", "--root", root, "--json"]),
    ) as {
      code: string;
    };
    const response = await fetch(`${server.url}/v1/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code, client_name: "bench" }),
    });
    const { credential } = (await response.json()) as { credential: string };
    const client = new Client({ name: "ivoai-bench", version: "1" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v1/memory/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${credential}`, "x-ivoai-project": "project-3" } },
      }),
    );
    return { revision, server, client, times: [] as number[], cpuMs: 0 as number | undefined, calls: 0 };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/**
 * memory_query through /v1/memory/mcp of this tree's gateway and of `--ab`'s, on copies of one seeded store, in
 * alternating rounds of the same queries (the order within a round alternates too), with each server's CPU time.
 */
async function abLatency(revisionName: string) {
  const seed = await seededMemoryStore(pagesForLatency, { fresh: process.argv.includes("--fresh") });
  const revisions = [await currentRevision(), await buildRevision(revisionName)];
  const tree = await createBenchTree("memory-ab");
  const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
    loadCollection(name).queries.map((query) => query.text),
  );
  const sides: Awaited<ReturnType<typeof abGateway>>[] = [];
  const loadBefore = loadavg()[0] as number;
  try {
    // One after the other, so that each start time is its own.
    for (const [i, revision] of revisions.entries())
      sides.push(await abGateway(revision, seed.file, path.join(tree.root, `side-${i}`)));
    const call = async (side: (typeof sides)[0], query: string) => {
      const begin = performance.now();
      const result = await side.client.callTool({ name: "memory_query", arguments: { query, limit: 10 } });
      if (result.isError) throw new Error(`${side.revision.label}: ${JSON.stringify(result.content)}`);
      return performance.now() - begin;
    };
    // Call by call, each query to both, whichever went first going second next: the machine's load changes
    // within a second, and alternating rounds of many calls each still saw it hit one side more.
    const both = async (i: number, query: string) => {
      const times = [];
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) times.push(await call(side, query));
      return i % 2 === 0 ? times : times.reverse();
    };
    for (let i = 0; i < WARM_UP; i++) await both(i, queries[i % queries.length] as string);
    const perRound = Math.ceil(measured / abRounds);
    const roundRatios: number[] = [];
    for (let round = 0; round < abRounds; round++) {
      // A server is idle while the other serves: its CPU time over the round is its own calls'.
      const cpuBefore = sides.map((side) => cpuMsOf(side.server.pid));
      const times = sides.map(() => [] as number[]);
      for (let i = round * perRound; i < (round + 1) * perRound; i++) {
        const pair = await both(i, queries[(WARM_UP + i) % queries.length] as string);
        for (const [s, time] of pair.entries()) times[s]?.push(time);
      }
      for (const [s, side] of sides.entries()) {
        const before = cpuBefore[s];
        const after = cpuMsOf(side.server.pid);
        side.cpuMs =
          side.cpuMs === undefined || before === undefined || after === undefined
            ? undefined
            : side.cpuMs + after - before;
        side.calls += perRound;
        side.times.push(...(times[s] as number[]));
      }
      roundRatios.push(summary(times[0] as number[]).p50 / summary(times[1] as number[]).p50);
    }
    const rows = [];
    for (const side of sides)
      rows.push({
        label: side.revision.label,
        commit: side.revision.commit,
        ...summary(side.times),
        cpuPerCall: side.cpuMs === undefined ? undefined : side.cpuMs / side.calls,
        startSeconds: side.server.startSeconds,
        rss: await side.server.rssMiB(),
      });
    return {
      seed,
      rows,
      roundRatios: roundRatios.sort((a, b) => a - b),
      perRound,
      load: { before: loadBefore, after: loadavg()[0] as number },
    };
  } finally {
    for (const side of sides) {
      await side.client.close();
      await side.server.stop();
    }
    await tree.cleanup();
  }
}

const c = await conversations(false);
const cShared = await conversations(true, utterancePage, [0, 0.1, 0.2, 0.5, 1]);
const cPlain = await conversations(false, plainUtterancePage);
const q = await quality();
const qualityReport = [
  "## evidence recall of memory_query on FriendsQA (one page per utterance, searched in the question's episode)",
  "",
  "| store | pages | queries | memory_query R@5 | memory_query R@10 | stock BM25 R@5 | stock BM25 R@10 (k1 0.9, b 0.4, same analyser, one index per episode, in run) |",
  "|---|---|---|---|---|---|---|",
  `| one per episode | ${c.pages} | ${c.queries} | **${c.recall5.toFixed(3)}** | **${c.recall10.toFixed(3)}** | ${c.stock5.toFixed(3)} | ${c.stock10.toFixed(3)} |`,
  `| plain pages (\`Speaker: text\`, no front matter), one session per scene | ${cPlain.pages} | ${cPlain.queries} | **${cPlain.recall5.toFixed(3)}** | **${cPlain.recall10.toFixed(3)}** | ${cPlain.stock5.toFixed(3)} | ${cPlain.stock10.toFixed(3)} |`,
  `| one for all, a scope per episode | ${cShared.pages} | ${cShared.queries} | ${cShared.recall5.toFixed(3)} | ${cShared.recall10.toFixed(3)} | ${cShared.stock5.toFixed(3)} | ${cShared.stock10.toFixed(3)} |`,
  "",
  "| half (FNV-1a of the question id) | queries | memory_query R@10, front matter | memory_query R@10, plain pages | stock BM25 R@10 |",
  "|---|---|---|---|---|",
  ...c.halves.map(
    (h, i) =>
      `| ${h.half} | ${h.queries} | ${h.recall10.toFixed(3)} | ${cPlain.halves[i]?.recall10.toFixed(3)} | ${h.stock10.toFixed(3)} |`,
  ),
  "",
  "memory_query fused with the corpus embedder (LSA learned from every page, each page embedded with ±3 turns of its session, weighted RRF k 60 over the top 60 of each; weight 0 is memory_query as it ships, on the shared store):",
  "",
  "| vector weight | R@10 | vs weight 0 |",
  "|---|---|---|",
  ...cShared.lsa.map(
    (row) =>
      `| ${row.weight} | ${row.recall10.toFixed(3)} | ${row.recall10 - (cShared.lsa[0]?.recall10 ?? 0) >= 0 ? "+" : ""}${(row.recall10 - (cShared.lsa[0]?.recall10 ?? 0)).toFixed(3)} |`,
  ),
  "",
  'Front matter pages: `speaker:` and `session:` (the scene), body the utterance, path `<scene>/u<n>`, written in order; stock BM25 indexes "Speaker: text".',
  "Plain pages: body `Speaker: text`, no front matter, same paths and order; each scene written by one MCP session of one credential, its session set as the server sets it on an approved write (`@<credential>/<x-ivoai-session-id>`; the bench writes through the store's write path, not through the gate). Goals: R@10 ≥ 0.70 with front matter, ≥ 0.66 with plain pages.",
  "",
  "## recall@10 of memory_query (FaQuAD: one page per paragraph, its questions as queries)",
  "",
  "| pages | queries | memory_query R@10 | stock BM25 R@10 (k1 0.9, b 0.4, same analyser, in run) |",
  "|---|---|---|---|",
  `| ${q.pages} | ${q.queries} | **${q.recall10.toFixed(3)}** | ${q.stock.toFixed(3)} |`,
  "",
];
/** Both reports open alike: title, machine and time, then the recall figures. */
const reportHead = () => [
  "# memory",
  "",
  `${machineLine()}, ${new Date().toISOString()}.`,
  "",
  ...qualityReport,
];
if (process.argv.includes("--quality-only")) {
  // Recall only (deterministic, seconds): for development; never saved.
  process.stdout.write(`${qualityReport.join("\n")}\n`);
  process.exit(0);
}
if (abRevision !== undefined) {
  const ab = await abLatency(abRevision);
  const [ours, theirs] = ab.rows as [(typeof ab.rows)[0], (typeof ab.rows)[0]];
  const ms = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(2));
  const report = [
    ...reportHead(),
    `## memory_query latency at ${pagesForLatency.toLocaleString("en")} pages, this tree against ${abRevision} in the same run`,
    "",
    `Both gateways run as child processes (\`ivoai server start\` of each revision's own build), each on its own copy of the same seeded store; one persistent official MCP client each, caller's scopes project-3 and _global. After ${WARM_UP} warm-up calls each, ${(ab.perRound * abRounds).toLocaleString("en")} calls each in ${abRounds} rounds of ${ab.perRound}, each query sent to one gateway then the other (which goes first alternates), so that the machine's load hits both alike. Server CPU: the process's user + system time over the measured calls (10 ms ticks).`,
    "",
    "| gateway | p50 ms | p90 ms | p99 ms | server CPU ms/call | start s (index load) | RSS MiB after |",
    "|---|---|---|---|---|---|---|",
    ...ab.rows.map(
      (row) =>
        `| ${row.label.replaceAll("|", "\\|")} | **${ms(row.p50)}** | ${ms(row.p90)} | ${ms(row.p99)} | ${ms(row.cpuPerCall)} | ${row.startSeconds.toFixed(1)} | ${row.rss === undefined ? "n/a" : row.rss.toFixed(0)} |`,
    ),
    "",
    `This tree / ${abRevision}: p50 **${(ours.p50 / theirs.p50).toFixed(3)}×**, p99 ${(ours.p99 / theirs.p99).toFixed(3)}×` +
      (ours.cpuPerCall !== undefined && theirs.cpuPerCall !== undefined
        ? `, server CPU per call ${(ours.cpuPerCall / theirs.cpuPerCall).toFixed(3)}×`
        : "") +
      `. Per-round p50 ratio (how much it varies between rounds): min ${(ab.roundRatios[0] as number).toFixed(3)}, median ${percentile(ab.roundRatios, 50).toFixed(3)}, max ${(ab.roundRatios.at(-1) as number).toFixed(3)}.`,
    "",
    `Load average (1 min) of the machine: ${ab.load.before.toFixed(2)} before the gateways started, ${ab.load.after.toFixed(2)} after the calls, on ${availableParallelism()} CPUs (other work on it slows both sides alike, but widens the spread).`,
    "",
    seedLine(ab.seed),
    "",
  ].join("\n");
  await publish(report);
  process.exit(0);
}
const l = await latency();
const latencyRows = [
  ["through /v1/memory/mcp (one persistent official client)", l.mcp, l.reference?.mcp, "p50 ≤ 10 ms"],
  ["in process: memory_query's searcher (no HTTP/MCP)", l.searcher, l.reference?.searcher, ""],
  [
    "agent-style questions (8–25 words, bench/lib/agent-queries.ts) through /v1/memory/mcp",
    l.mcpAgent,
    l.reference?.mcpAgent,
    "p50 ≤ 10 ms",
  ],
  [
    "agent-style questions, in process: memory_query's searcher",
    l.searcherAgent,
    l.reference?.searcherAgent,
    "",
  ],
] as const;
const referenceTable = l.reference
  ? [
      "",
      `Against a ${l.reference.pages.toLocaleString("en")}-page store seeded the same way, the same queries, in the same run (how latency grows with the store; goal: p50 ≤ 1.5× through MCP):`,
      "",
      `| path | p50 ratio | p99 ratio | at ${l.reference.pages.toLocaleString("en")} pages, p50 / p99 ms |`,
      "|---|---|---|---|",
      ...latencyRows.map(([label, figures, reference]) =>
        reference
          ? `| ${label} | **${(figures.p50 / reference.p50).toFixed(2)}×** | ${(figures.p99 / reference.p99).toFixed(2)}× | ${reference.p50.toFixed(2)} / ${reference.p99.toFixed(2)} |`
          : `| ${label} | | | |`,
      ),
    ]
  : [];
const report = [
  ...reportHead(),
  `## memory_query latency at ${pagesForLatency.toLocaleString("en")} pages (${measured.toLocaleString("en")} queries after ${WARM_UP} warm-up, caller's scopes project-3 and _global)`,
  "",
  "| path | p50 ms | p90 ms | p99 ms | target |",
  "|---|---|---|---|---|",
  ...latencyRows.map(
    ([label, figures, , target]) =>
      `| ${label} | **${figures.p50.toFixed(2)}** | ${figures.p90.toFixed(2)} | ${figures.p99.toFixed(2)} | ${target} |`,
  ),
  `| in process: memory_query's searcher right after a page write (index refresh included, 100 writes) | ${l.afterWrite.p50.toFixed(2)} | ${l.afterWrite.p90.toFixed(2)} | ${l.afterWrite.p99.toFixed(2)} | |`,
  `| in process: the same 100 queries again, no write between (control) | ${l.repeated.p50.toFixed(2)} | ${l.repeated.p90.toFixed(2)} | ${l.repeated.p99.toFixed(2)} | |`,
  `| in process: the bare lexical index (top 50, no scope filter or page reads) | ${l.core.p50.toFixed(2)} | ${l.core.p90.toFixed(2)} | ${l.core.p99.toFixed(2)} | |`,
  `| in process: memory_query fused with 384-dims int8 page vectors (${l.vectors.vectors.toLocaleString("en")} vectors; model inference not included) | **${l.vectors.hybrid.p50.toFixed(2)}** | ${l.vectors.hybrid.p90.toFixed(2)} | ${l.vectors.hybrid.p99.toFixed(2)} | p50 ≤ 10 ms (lexical searcher above is the reference) |`,
  `| in process: the vector search alone (exact scan of the caller's scopes' rows, top 60) | ${l.vectors.scan.p50.toFixed(2)} | ${l.vectors.scan.p90.toFixed(2)} | ${l.vectors.scan.p99.toFixed(2)} | |`,
  `| in process: memory_query fused with vectors right after a page write (the page embedded, scored in the tail until a repack; 50 writes) | ${l.vectors.afterWrite.p50.toFixed(2)} | ${l.vectors.afterWrite.p90.toFixed(2)} | ${l.vectors.afterWrite.p99.toFixed(2)} | |`,
  `| in process: the same 50 queries fused with vectors again, no write between (control) | ${l.vectors.repeated.p50.toFixed(2)} | ${l.vectors.repeated.p90.toFixed(2)} | ${l.vectors.repeated.p99.toFixed(2)} | |`,
  ...referenceTable,
  "",
  `Vectors: synthetic 384-dims unit vectors (seeded from each page's text) stand in for multilingual-e5-small's, so the scan, row filter, fusion and refresh cost what the model's vectors would; the model's inference (one query embedding a search; every page once) is not included, and recall is not measured (no model can be downloaded here). Embedding and storing all ${l.vectors.vectors.toLocaleString("en")} page vectors in page_vectors (the first start with a model, here without inference): ${l.vectors.fillSeconds.toFixed(1)} s.`,
  "",
  "| gateway start (in process, store file in the OS page cache) | listening (context served) | /ready says ready (memory index loaded) | target |",
  "|---|---|---|---|",
  `| first start: no snapshot, every page read | ${l.starts.cold.listening.toFixed(2)} s | ${l.starts.cold.ready.toFixed(2)} s | |`,
  `| next start: the index loaded from the snapshot the first wrote (${l.starts.snapshotMiB.toFixed(0)} MiB, written ${l.starts.snapshotSeconds.toFixed(1)} s after it was ready) | ${l.starts.warm.listening.toFixed(2)} s | **${l.starts.warm.ready.toFixed(2)} s** | ready ≤ 3 s at 500k pages (the first start is the reference) |`,
  "",
  "The queries above ran on the second gateway. " +
    `Resident memory of the bench process (gateway in process, after GC): ${l.rss.before.toFixed(0)} MiB before the start, ` +
    `${l.rss.started.toFixed(0)} MiB once started, ${l.rss.served.toFixed(0)} MiB after the queries.`,
  "",
  seedLine(l.seed),
  "",
].join("\n");
await publish(report);
