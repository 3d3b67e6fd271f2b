// The console API at scale through the real gateway: /v1/audit/activity over 100,000 tool calls in its
// window, /v1/approvals/counts with 10,000 pending requests, and /v1/admin/overview beside them.
// `--distinct-sessions=N` adds N calls, each in its own session, over the 90 days before, and times a quarter's
// activity by day with the process's peak resident memory (agents choose session ids: memory must stay bounded).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { serverPaths } from "../src/config/server-paths.js";
import { openAuditLogOn } from "../src/server/audit/store.js";
import { createEnrollmentService } from "../src/server/enrollment/service.js";
import { openServerEnrollmentStore } from "../src/server/enrollment/store.js";
import { startGateway } from "../src/server/start.js";
import { resolveStoreBackend } from "../src/server/store/backend.js";
import { silentLogger } from "../src/shared/logger.js";
import { seedPendingApprovals } from "./lib/approvals-seed.js";
import { percentile } from "./lib/ir.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const calls = Number(process.argv.find((arg) => arg.startsWith("--calls="))?.slice(8) ?? "100000");
const pending = Number(process.argv.find((arg) => arg.startsWith("--pending="))?.slice(10) ?? "10000");
const distinctSessions = Number(
  process.argv.find((arg) => arg.startsWith("--distinct-sessions="))?.slice(20) ?? "0",
);
const RUNS = 30;

const tree = await createBenchTree("console-api");
const paths = serverPaths(tree.root);
const now = Date.now();

// Tool calls spread evenly over the last 24 hours, as the MCP endpoints record them.
let clock = new Date(now);
const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths, { now: () => clock });
const tools = [
  "context_search",
  "memory_query",
  "memory_write_page",
  "context_get_document",
  "memory_read_page",
];
for (let index = 0; index < calls; index += 1) {
  clock = new Date(now - 86_400_000 + Math.floor((index * 86_400_000) / calls));
  void audit.record({
    kind: "tool_call",
    tool: tools[index % tools.length] as string,
    endpoint: "ivoai-memory",
    credential_id: `cli_${index % 40}`,
    session_id: `sess-${index % 2000}`,
    tier: "read",
    status: index % 20 === 0 ? "FAILED" : "SUCCESS",
    latency_ms: (index * 7919) % 400,
    tokens_consumed: 100 + (index % 900),
    guardrail_checked: true,
  });
}
await audit.close();

await seedPendingApprovals(tree.root, pending, now);

let gateway = await startGateway({ root: tree.root, logger: silentLogger });
const store = await openServerEnrollmentStore(paths);
const enrollment = createEnrollmentService({ store });
const { code } = await enrollment.createCode({
  ttlMs: 60_000,
  scopes: ["status:read", "approvals:read", "audit:read"],
});
const exchanged = await enrollment.exchange(code, "bench");
await store.close();
if (!exchanged.ok) throw new Error("enrollment failed");
const bearer = exchanged.credential;

async function measure(
  route: string,
  check: (body: Record<string, unknown>) => void,
  runs = RUNS,
  warmUp = 3,
) {
  const times: number[] = [];
  for (let run = 0; run < runs + warmUp; run += 1) {
    const started = performance.now();
    const response = await fetch(`${gateway.url}${route}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    const body = (await response.json()) as Record<string, unknown>;
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`${route}: ${response.status} ${JSON.stringify(body)}`);
    check(body);
    if (run >= warmUp) times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  return { route, p50: percentile(times, 50), p95: percentile(times, 95) };
}

const activityUrl = (bucket: string) =>
  `/v1/audit/activity?${new URLSearchParams({
    since: new Date(now - 86_400_000).toISOString(),
    until: new Date(now + 1).toISOString(),
    bucket,
  })}`;
const activityCheck = (body: Record<string, unknown>) => {
  if ((body.totals as { calls: number }).calls !== calls) throw new Error("activity missed calls");
};
const results: { route: string; p50: number; p95: number }[] = [
  await measure(activityUrl("hour"), activityCheck),
  await measure(activityUrl("minute"), activityCheck),
  await measure("/v1/approvals/counts", (body) => {
    if (body.pending !== pending) throw new Error("counts missed pending requests");
  }),
  await measure("/v1/admin/overview", () => {}),
];
// Another request while activity aggregates: it waits for one chunk, not for the whole aggregation.
const during: number[] = [];
for (let run = 0; run < 10; run += 1) {
  const activity = fetch(`${gateway.url}${activityUrl("hour")}`, {
    headers: { authorization: `Bearer ${bearer}` },
  }).then((response) => response.arrayBuffer());
  let activityDone = false;
  void activity.then(() => (activityDone = true));
  await new Promise((resolve) => setTimeout(resolve, 50));
  // The figure means something only while the aggregation still runs.
  if (activityDone) throw new Error("the activity request ended within 50 ms: nothing to measure beside it");
  const started = performance.now();
  await (
    await fetch(`${gateway.url}/v1/approvals/counts`, {
      headers: { authorization: `Bearer ${bearer}` },
    })
  ).arrayBuffer();
  during.push(performance.now() - started);
  await activity;
}
during.sort((a, b) => a - b);
results.push({
  route: "/v1/approvals/counts, sent 50 ms into an activity request",
  p50: percentile(during, 50),
  p95: percentile(during, 95),
});
await gateway.close();

const scaleLines: string[] = [];
if (distinctSessions > 0) {
  const DAYS = 90;
  const quarterStart = now - DAYS * 86_400_000;
  const log = await openAuditLogOn(await resolveStoreBackend(paths), paths, { now: () => clock });
  for (let index = 0; index < distinctSessions; index += 1) {
    clock = new Date(quarterStart + Math.floor((index * (DAYS - 1) * 86_400_000) / distinctSessions));
    void log.record({
      kind: "tool_call",
      // Unknown tools are recorded under the name the caller sent.
      tool: index % 1000 === 0 ? `made_up_${index}` : (tools[index % tools.length] as string),
      endpoint: "ivoai-memory",
      credential_id: `cli_${index % 40}`,
      session_id: `agent-${index}`,
      tier: "read",
      status: index % 20 === 0 ? "FAILED" : "SUCCESS",
      latency_ms: (index * 7919) % 400,
      tokens_consumed: 100 + (index % 900),
      guardrail_checked: true,
    });
  }
  await log.close();
  gateway = await startGateway({ root: tree.root, logger: silentLogger });
  global.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const route = `/v1/audit/activity?${new URLSearchParams({
    since: new Date(quarterStart).toISOString(),
    until: new Date(now + 1).toISOString(),
    bucket: "day",
  })}`;
  const quarter = await measure(
    route,
    (body) => {
      if ((body.totals as { calls: number }).calls !== calls + distinctSessions)
        throw new Error("activity missed calls");
      // The 2,000 sessions of the last day stay the busiest, counted exactly, behind the one-call sessions.
      if ((body.by_session as { calls: number }[])[0]?.calls !== Math.ceil(calls / 2000))
        throw new Error("activity lost a busy session's calls");
    },
    5,
    0,
  );
  clearInterval(sampler);
  await gateway.close();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  scaleLines.push(
    `With ${distinctSessions.toLocaleString("en")} more calls, each in its own session, over the 90 days before (5 requests,`,
    `no warm-up; resident memory of the whole process ${mb(before)} MB before, at most ${mb(peak)} MB during them):`,
    "",
    "| request | p50 ms | p95 ms |",
    "|---|---|---|",
    `| \`/v1/audit/activity?bucket=day\` over 90 days | **${quarter.p50.toFixed(1)}** | ${quarter.p95.toFixed(1)} |`,
    "",
  );
}
await tree.cleanup();

const lines = [
  "# console API",
  "",
  `${machineLine()}, ${new Date().toISOString()}.`,
  "",
  `Through the real gateway over HTTP, ${RUNS} requests each after 3 warm-up: ${calls.toLocaleString("en")} tool calls in the`,
  `audit log's 24-hour window (40 credentials, 2,000 sessions), ${pending.toLocaleString("en")} pending approval requests.`,
  "",
  "| request | p50 ms | p95 ms |",
  "|---|---|---|",
  ...results.map(
    (r) =>
      `| \`${r.route.replace(/since=[^&]+&until=[^&]+&/, "")}\` | **${r.p50.toFixed(1)}** | ${r.p95.toFixed(1)} |`,
  ),
  "",
  ...scaleLines,
];
if (!process.argv.includes("--no-save"))
  await writeFile(path.resolve("bench/results/console-api.md"), lines.join("\n"));
process.stdout.write(lines.join("\n"));
