// Approve throughput through the real HTTP API: N pending page writes (`--pending=5000`) decided by `--clients=8`
// concurrent approvers (POST /v1/approvals/:id/approve, a bearer credential with approvals:decide) against a
// gateway whose memory already holds `--pages=500000` seeded pages; then checks each approval was applied
// exactly once (one page version per request, a second approve refused with no new version).
import { spawn } from "node:child_process";
import { copyFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { serverPaths } from "../src/config/server-paths.js";
import { createApprovalGate } from "../src/server/approvals/gate.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import { memoryFile } from "../src/server/memory/service.js";
import { openMemoryStore } from "../src/server/memory/store.js";
import { startGateway } from "../src/server/start.js";
import { silentLogger } from "../src/shared/logger.js";
import { seedPendingApprovals } from "./lib/approvals-seed.js";
import { percentile } from "./lib/ir.js";
import { seededMemoryStore } from "./lib/memory-seed.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((value) => value.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const pending = arg("pending", 5_000);
const clients = arg("clients", 8);
const pages = arg("pages", 500_000);

const tree = await createBenchTree("approvals");
const paths = serverPaths(tree.root);
if (pages > 0) await copyFile((await seededMemoryStore(pages)).file, memoryFile(paths));
await seedPendingApprovals(tree.root, pending);
const ids = Array.from({ length: pending }, (_, index) => `apr_bench${String(index).padStart(6, "0")}`);
const versionsBefore = await countVersions();

const gateway = await startGateway({ root: tree.root, logger: silentLogger });
const store = await openServerEnrollmentStore(paths);
const enrollment = createEnrollmentService({ store });
const { code } = await enrollment.createCode({
  ttlMs: 60_000,
  scopes: ["approvals:read", "approvals:decide"],
});
const exchanged = await enrollment.exchange(code, "bench-approver");
await store.close();
if (!exchanged.ok) throw new Error("enrollment failed");
const bearer = exchanged.credential;

const approve = (id: string) =>
  fetch(`${gateway.url}/v1/approvals/${id}/approve`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "bench" }),
  });

// The approvers run in a child process (as they would: another machine's browser or CLI), so this process's
// CPU time during the run is the gateway's alone: CPU per approve holds on a busy machine where wall time does
// not. The credential reaches the child on stdin, never argv. Each approver takes the next id until none are left.
const APPROVERS = `
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", async () => {
  const { url, bearer, ids, clients } = JSON.parse(input);
  const latencies = [];
  const statuses = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
      const begin = performance.now();
      const response = await fetch(url + "/v1/approvals/" + id + "/approve", {
        method: "POST",
        headers: { authorization: "Bearer " + bearer, "content-type": "application/json" },
        body: JSON.stringify({ reason: "bench" }),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - begin);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  }));
  process.stdout.write(JSON.stringify({ seconds: (performance.now() - started) / 1000, latencies, statuses }));
});
`;
const cpuBefore = process.cpuUsage();
const { seconds, latencies, statuses } = await new Promise<{
  seconds: number;
  latencies: number[];
  statuses: Record<string, number>;
}>((resolve, reject) => {
  const child = spawn(process.execPath, ["-e", APPROVERS], { stdio: ["pipe", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.once("error", reject);
  child.once("close", (code) => {
    if (code === 0) resolve(JSON.parse(output));
    else reject(new Error(`the approvers exited with ${code}`));
  });
  child.stdin.end(JSON.stringify({ url: gateway.url, bearer, ids, clients }));
});
const gatewayCpu = process.cpuUsage(cpuBefore);
const cpuPerApprove = (gatewayCpu.user + gatewayCpu.system) / 1000 / pending;
const systemShare = gatewayCpu.system / (gatewayCpu.user + gatewayCpu.system);

// Exactly once: a second approve of every 50th request is refused, and no request left a second version.
let refused = 0;
for (const id of ids.filter((_, index) => index % 50 === 0)) {
  const response = await approve(id);
  const body = (await response.json()) as { outcome?: string };
  if (response.status === 409 && body.outcome === "already_decided") refused++;
}
await gateway.close();
const applied = await countApplied();
const versionsAfter = await countVersions();

// The same decisions in process (the gate on the store, no HTTP): what the HTTP path adds is the rest.
await seedPendingApprovals(tree.root, pending, Date.now(), pending);
const direct = await openMemoryStore(memoryFile(paths));
const gate = createApprovalGate({ store: direct });
const inProcessStarted = performance.now();
const inProcessCpuBefore = process.cpuUsage();
for (let index = pending; index < 2 * pending; index++) {
  const outcome = await gate.decide(
    `apr_bench${String(index).padStart(6, "0")}`,
    true,
    "bench",
    "bench",
    "cli_bench",
  );
  if (outcome.outcome !== "applied") throw new Error(`in-process approve: ${outcome.outcome}`);
}
const inProcessRate = pending / ((performance.now() - inProcessStarted) / 1000);
const inProcessCpu = process.cpuUsage(inProcessCpuBefore);
const inProcessCpuPerApprove = (inProcessCpu.user + inProcessCpu.system) / 1000 / pending;
await direct.close();
await tree.cleanup();

async function countVersions(): Promise<{ total: number; benchPaths: number; maxPerPath: number }> {
  const memory = await openMemoryStore(memoryFile(paths));
  try {
    const total = (await memory.stats()).versions ?? 0;
    let benchPaths = 0;
    let maxPerPath = 0;
    for (let index = 0; index < pending; index++) {
      const scope = index % 3 === 0 ? "_global" : `git:acme/service-${index % 13}`;
      const versions = await memory.pageVersions(scope, `notes/service-${index % 13}/finding-${index}`);
      if (versions.length > 0) benchPaths++;
      maxPerPath = Math.max(maxPerPath, versions.length);
    }
    return { total, benchPaths, maxPerPath };
  } finally {
    await memory.close();
  }
}

async function countApplied(): Promise<number> {
  const memory = await openMemoryStore(memoryFile(paths));
  try {
    return (await memory.approvalCounts()).applied;
  } finally {
    await memory.close();
  }
}

const sorted = latencies.sort((a, b) => a - b);
const rate = pending / seconds;
const exactlyOnce =
  applied === pending &&
  versionsAfter.total - versionsBefore.total === pending &&
  versionsAfter.benchPaths === pending &&
  versionsAfter.maxPerPath === 1 &&
  refused === Math.ceil(pending / 50);
const report = [
  "# approvals",
  "",
  `${machineLine()}, ${new Date().toISOString()}.`,
  "",
  `## approve throughput through the HTTP API (${pending.toLocaleString("en")} pending page writes, ${clients} concurrent approvers, ${pages.toLocaleString("en")} pages already in memory)`,
  "",
  "| path | approvals/s | p50 ms | p99 ms | gateway CPU ms per approve (→ approvals/s per core) | responses | target |",
  "|---|---|---|---|---|---|---|",
  `| POST /v1/approvals/:id/approve | **${rate.toFixed(0)}** | ${percentile(sorted, 50).toFixed(2)} | ${percentile(sorted, 99).toFixed(2)} | ${cpuPerApprove.toFixed(3)} (${(1000 / cpuPerApprove).toFixed(0)}) | ${Object.entries(
    statuses,
  )
    .map(([status, n]) => `${n} × ${status}`)
    .join(", ")} | ≥ 500/s |`,
  `| in process: the approval gate on the store, one at a time (no HTTP) | ${inProcessRate.toFixed(0)} | | | ${inProcessCpuPerApprove.toFixed(3)} (${(1000 / inProcessCpuPerApprove).toFixed(0)}) | | |`,
  "",
  `Exactly once: ${applied} applied, ${versionsAfter.total - versionsBefore.total} new page versions, ` +
    `${versionsAfter.benchPaths} pages with at most ${versionsAfter.maxPerPath} version each, ` +
    `${refused} of ${Math.ceil(pending / 50)} second approves refused as already decided: **${exactlyOnce ? "yes" : "NO"}**.`,
  "",
  `Gateway CPU during the run: ${(100 * systemShare).toFixed(0)} % in the kernel (loopback TCP, WAL writes). ` +
    "Each approve is one SQLite transaction (WAL, synchronous=NORMAL), answered after its commit reached the " +
    "operating system (WAL written; fsync at checkpoints): it survives the process being killed " +
    "(test/approval-durability.e2e.test.ts), not a power loss or a kernel crash.",
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (!exactlyOnce) process.exitCode = 1;
if (!process.argv.includes("--no-save")) await writeFile(path.resolve("bench/results/approvals.md"), report);
