// Scale-out (issue 16): context_search calls/s through MCP with 1 and 2 gateway replicas on one PostgreSQL, in
// the same run (8 closed-loop clients, spread over the replicas; rounds alternate), and the latency of an
// enrollment exchange and of an approval on each backend (SQLite tree vs PostgreSQL tree, same run). On one machine the
// replicas, PostgreSQL and the clients share the cores: the figures show the cost of the shared store and of
// coordination, not the speed-up a second host would give.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import {
  addDocsConnector,
  connectMcp,
  enroll,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "../test/helpers.js";
import { createThrowawayDatabase, postgresAvailable, usePostgres } from "../test/postgres.js";
import { generateCorpus } from "./lib/corpus.js";
import { loadCollection, percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const seconds = Number(arg("seconds") ?? "8");
const rounds = Number(arg("rounds") ?? "3");
const megabytes = Number(arg("mb") ?? "20");
const exchanges = Number(arg("exchanges") ?? "200");
const save = !process.argv.includes("--no-save");
const CLIENTS = 8;

if (!(await postgresAvailable())) {
  process.stderr.write("replicas: no PostgreSQL at IVOAI_TEST_PG_URL (scripts/ci-postgres.sh starts one)\n");
  process.exit(2);
}
const queries = ["cranfield", "adi", "faquad"].flatMap((name) =>
  loadCollection(name).queries.map((q) => q.text),
);

/** context_search calls in `seconds` by CLIENTS closed loops spread over `replicas`. */
async function searchRate(replicas: readonly RunningServer[], credential: string): Promise<number> {
  const clients: Client[] = await Promise.all(
    Array.from({ length: CLIENTS }, (_, i) =>
      connectMcp(`${replicas[i % replicas.length]?.url}/v1/mcp/context`, credential),
    ),
  );
  try {
    const loop = async (client: Client, offset: number, until: number) => {
      let calls = 0;
      for (let i = offset; performance.now() < until; i += CLIENTS) {
        await client.callTool({ name: "context_search", arguments: { query: queries[i % queries.length] } });
        calls++;
      }
      return calls;
    };
    await Promise.all(clients.map((client, i) => loop(client, i, performance.now() + 1000)));
    const until = performance.now() + seconds * 1000;
    const calls = await Promise.all(clients.map((client, i) => loop(client, i * 7, until)));
    return calls.reduce((sum, n) => sum + n, 0) / seconds;
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** p50 and p95 of `times` in ms (percentile wants them sorted). */
function latencies(times: number[]): { p50: number; p95: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

/** p50/p95 of POST /v1/enroll for codes made beforehand through the store (not the CLI, to keep this quick). */
async function enrollLatency(root: string, url: string): Promise<{ p50: number; p95: number }> {
  const store = await openServerEnrollmentStore(serverPaths(root));
  const service = createEnrollmentService({ store });
  const codes: string[] = [];
  try {
    for (let i = 0; i < exchanges; i++) codes.push((await service.createCode({ ttlMs: 3_600_000 })).code);
  } finally {
    await store.close();
  }
  const times: number[] = [];
  for (const code of codes) {
    const started = performance.now();
    const response = await enroll(url, code);
    if (response.status !== 201) throw new Error(`enroll answered ${response.status}`);
    await response.arrayBuffer();
    times.push(performance.now() - started);
  }
  return latencies(times);
}

/** p50/p95 of POST /v1/approvals/:id/approve (applied), for requests an agent filed through MCP beforehand. */
async function approveLatency(root: string, url: string): Promise<{ p50: number; p95: number }> {
  const agent = await connectMcp(`${url}/v1/memory/mcp`, await enrolledCredential(url, root), {
    "x-ivoai-session-id": "sess-bench",
    "x-ivoai-project": "git:acme/bench",
  });
  const approver = await enrolledCredential(url, root, "approvals:read,approvals:decide");
  const ids: string[] = [];
  try {
    // At most 50 pending per client (the default cap): file and decide in rounds.
    const times: number[] = [];
    for (let done = 0; done < exchanges; ) {
      ids.length = 0;
      for (let i = 0; i < Math.min(50, exchanges - done); i++) {
        const result = await agent.callTool({
          name: "memory_write_page",
          arguments: { path: `bench/p${done + i}`, body: `# Page ${done + i}\n\nApproval latency page.` },
        });
        ids.push((result.structuredContent as { data: { approval_id: string } }).data.approval_id);
      }
      for (const id of ids) {
        const started = performance.now();
        const response = await fetch(`${url}/v1/approvals/${id}/approve`, {
          method: "POST",
          headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
          body: "{}",
        });
        const body = (await response.json()) as { outcome: string };
        if (body.outcome !== "applied")
          throw new Error(`approve answered ${response.status} ${body.outcome}`);
        times.push(performance.now() - started);
      }
      done += ids.length;
    }
    return latencies(times);
  } finally {
    await agent.close();
  }
}

const { dir, cleanup } = await tempDir("ivoai-bench-replicas-");
const database = await createThrowawayDatabase();
const servers: RunningServer[] = [];
try {
  const corpus = await generateCorpus(path.join(dir, "corpus"), Math.ceil((megabytes * 1e6) / 8000), 8000);
  const sqliteRoot = path.join(dir, "sqlite");
  const postgresRoot = path.join(dir, "postgres");
  for (const root of [sqliteRoot, postgresRoot]) {
    await mkdir(root);
    await initRoot(root);
    // The exchanges come from one address: lift the per-address attempt limit for this tree.
    const config = path.join(root, "etc/ivoai/server.toml");
    const text = await readFile(config, "utf8");
    if (!/attempts_per_minute = \d+/.test(text))
      throw new Error("server.toml has no enrollment.attempts_per_minute");
    await writeFile(config, text.replace(/attempts_per_minute = \d+/, "attempts_per_minute = 1000000"));
  }
  await usePostgres(postgresRoot, database.url);
  await addDocsConnector(postgresRoot, corpus.dir);
  const ingest = await runIvoai(["server", "ingest", "--root", postgresRoot]);
  if (ingest.code !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);

  const primary = await startServer(postgresRoot);
  servers.push(primary);
  const second = await startServer(postgresRoot, ["--replica"]);
  servers.push(second);
  const credential = await enrolledCredential(primary.url, postgresRoot);
  const one: number[] = [];
  const two: number[] = [];
  for (let round = 0; round < rounds; round++) {
    one.push(await searchRate([primary], credential));
    two.push(await searchRate([primary, second], credential));
    process.stderr.write(
      `round ${round + 1}: 1 replica ${one.at(-1)?.toFixed(0)}/s, 2 replicas ${two.at(-1)?.toFixed(0)}/s\n`,
    );
  }
  const sqliteServer = await startServer(sqliteRoot);
  servers.push(sqliteServer);
  const enrollSqlite = await enrollLatency(sqliteRoot, sqliteServer.url);
  const enrollPostgres = await enrollLatency(postgresRoot, primary.url);
  const approveSqlite = await approveLatency(sqliteRoot, sqliteServer.url);
  const approvePostgres = await approveLatency(postgresRoot, primary.url);
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const report = [
    "# replicas",
    "",
    `Gateway replicas on one PostgreSQL (${database.name.replace(/_[0-9a-f]+$/, "")}…, local), a ${(corpus.bytes / 1e6).toFixed(0)} MB generated corpus (${corpus.files} files). ${machineLine()}, ${new Date().toISOString()}.`,
    `Replicas, PostgreSQL and the clients share this machine's ${availableParallelism()} cores.`,
    "",
    "| figure | 1 replica | 2 replicas |",
    "|---|---|---|",
    `| context_search calls/s, ${CLIENTS} clients (median of ${rounds} × ${seconds} s) | ${median(one).toFixed(0)} | ${median(two).toFixed(0)} |`,
    "",
    "| figure | SQLite | PostgreSQL |",
    "|---|---|---|",
    `| enrollment exchange p50 / p95 (ms, ${exchanges} sequential) | ${enrollSqlite.p50.toFixed(2)} / ${enrollSqlite.p95.toFixed(2)} | ${enrollPostgres.p50.toFixed(2)} / ${enrollPostgres.p95.toFixed(2)} |`,
    `| approve (applied) p50 / p95 (ms, ${exchanges} sequential, HTTP) | ${approveSqlite.p50.toFixed(2)} / ${approveSqlite.p95.toFixed(2)} | ${approvePostgres.p50.toFixed(2)} / ${approvePostgres.p95.toFixed(2)} |`,
    "",
  ].join("\n");
  process.stdout.write(`${report}\n`);
  if (save) await writeFile(path.resolve("bench/results/replicas.md"), report);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await database.drop();
  await cleanup();
}
