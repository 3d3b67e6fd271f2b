// The gateway's own cost (issue 15, goal 1): context_health through /v1/mcp/context on the built server
// (authentication, guardrail, envelope, audit all on) against a bare official-SDK stateless server with one
// trivial tool, in the same run, with the same official MCP client: calls/s with 8 closed-loop clients and
// sequential p50/p95. Each server runs in its own process; the clients run here.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectMcp, enrolledCredential, initWithDocs, startServer, tempDir } from "../test/helpers.js";
import { percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";

const seconds = Number(process.argv.find((arg) => arg.startsWith("--seconds="))?.slice(10) ?? "10");
const sequential = Number(process.argv.find((arg) => arg.startsWith("--sequential="))?.slice(13) ?? "1000");
/** `--profile=DIR`: the gateway writes a CPU profile there when it stops. */
const profile = process.argv.find((arg) => arg.startsWith("--profile="))?.slice(10);
const CLIENTS = 8;

interface Target {
  name: string;
  tool: string;
  connect(): Promise<Client>;
}

function startBare(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve("bench/lib/bare-mcp-server.mjs")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
      resolve({ url: (JSON.parse(line) as { url: string }).url, child }),
    );
    child.once("exit", (code) => reject(new Error(`bare server exited (${code})`)));
  });
}

/** Calls/s of `clients` closed loops for `seconds`, after a warm-up. */
async function throughput(target: Target): Promise<number> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => target.connect()));
  try {
    const loop = async (client: Client, until: number) => {
      let calls = 0;
      while (performance.now() < until) {
        await client.callTool({ name: target.tool, arguments: {} });
        calls++;
      }
      return calls;
    };
    await Promise.all(clients.map((client) => loop(client, performance.now() + 1000)));
    const started = performance.now();
    const counts = await Promise.all(clients.map((client) => loop(client, started + seconds * 1000)));
    return counts.reduce((sum, count) => sum + count, 0) / ((performance.now() - started) / 1000);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** Sequential latency of one client, in ms, after a warm-up. */
async function latency(target: Target): Promise<number[]> {
  const client = await target.connect();
  try {
    const times: number[] = [];
    for (let index = 0; index < sequential + 100; index++) {
      const started = performance.now();
      const result = await client.callTool({ name: target.tool, arguments: {} });
      if (result.isError) throw new Error(`${target.name}: ${JSON.stringify(result.content)}`);
      if (index >= 100) times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b);
  } finally {
    await client.close();
  }
}

const { dir, cleanup } = await tempDir("ivoai-bench-gateway-");
const docs = path.join(dir, "docs");
await mkdir(docs);
await writeFile(path.join(docs, "a.md"), "# A\n\nalpha beta\n");
await initWithDocs(path.join(dir, "server"), docs);
const gateway = await startServer(
  path.join(dir, "server"),
  [],
  profile ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`] : [],
);
const bare = await startBare();
try {
  const credential = await enrolledCredential(gateway.url, path.join(dir, "server"));
  const targets: Target[] = [
    { name: "bare official SDK server", tool: "health", connect: () => connectMcp(bare.url, "unused") },
    {
      name: "ivoai gateway, /v1/mcp/context",
      tool: "context_health",
      connect: () => connectMcp(`${gateway.url}/v1/mcp/context`, credential),
    },
  ];
  const rows: { name: string; rate: number; p50: number; p95: number }[] = [];
  for (const target of targets) {
    const times = await latency(target);
    rows.push({
      name: target.name,
      rate: await throughput(target),
      p50: percentile(times, 50),
      p95: percentile(times, 95),
    });
  }
  const [reference, ours] = rows as [(typeof rows)[0], (typeof rows)[0]];
  const lines = [
    "# gateway overhead",
    "",
    `${machineLine()}, ${new Date().toISOString()}.`,
    "",
    `Same run, same official MCP client (one connection per client, stateless servers, JSON responses), each server`,
    `in its own process: ${CLIENTS} closed-loop clients for ${seconds} s after 1 s of warm-up; sequential latency over`,
    `${sequential} calls after 100 of warm-up. The gateway runs with authentication, guardrail, envelope and audit.`,
    "",
    `| server | calls/s (${CLIENTS} clients) | sequential p50 ms | p95 ms |`,
    "|---|---|---|---|",
    ...rows.map(
      (row) => `| ${row.name} | ${row.rate.toFixed(0)} | ${row.p50.toFixed(2)} | ${row.p95.toFixed(2)} |`,
    ),
    "",
    `Gateway / bare: **${(ours.rate / reference.rate).toFixed(2)}×** the calls/s (goal ≥ 1.0×); sequential p50`,
    `**${ours.p50 - reference.p50 >= 0 ? "+" : ""}${(ours.p50 - reference.p50).toFixed(2)} ms** (goal ≤ +0.2 ms).`,
    "",
  ];
  const report = lines.join("\n");
  process.stdout.write(report);
  await mkdir("bench/results", { recursive: true });
  await writeFile("bench/results/gateway.md", report);
} finally {
  bare.child.kill("SIGTERM");
  await gateway.stop();
  await cleanup();
}
