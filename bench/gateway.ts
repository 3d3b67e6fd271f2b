// The gateway's own cost (issue 15, goal 1; issue 34): context_health through /v1/mcp/context on the built server
// (authentication, guardrail, envelope, audit all on) against bare official-SDK servers with one trivial tool
// (stateless: a server per request; stateful: a server per session, kept), in the same run, with the same
// official MCP client: calls/s with 8 closed-loop clients and sequential p50/p95, and each server's CPU time per
// call. Each server runs in its own process; the clients run here. The three are measured in alternating rounds,
// so a change in the machine's load hits them alike.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectMcp, enrolledCredential, initWithDocs, startServer, tempDir } from "../test/helpers.js";
import { percentile } from "./lib/ir.js";
import { cpuMsOf } from "./lib/proc-cpu.js";
import { machineLine } from "./lib/server-tree.js";

const seconds = Number(process.argv.find((arg) => arg.startsWith("--seconds="))?.slice(10) ?? "10");
const sequential = Number(process.argv.find((arg) => arg.startsWith("--sequential="))?.slice(13) ?? "1000");
/** `--profile=DIR`: the gateway writes a CPU profile there when it stops. */
const profile = process.argv.find((arg) => arg.startsWith("--profile="))?.slice(10);
/** Rounds each measurement is split into, alternating the two servers. */
const rounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "3");
const save = !process.argv.includes("--no-save");
const CLIENTS = 8;
const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(2)}`;

interface Target {
  name: string;
  tool: string;
  pid: number | undefined;
  connect(): Promise<Client>;
}

function startBare(stateful: boolean): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const args = [path.resolve("bench/lib/bare-mcp-server.mjs"), ...(stateful ? ["--stateful"] : [])];
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
      resolve({ url: (JSON.parse(line) as { url: string }).url, child }),
    );
    child.once("exit", (code) => reject(new Error(`bare server exited (${code})`)));
  });
}

/** Calls of `clients` closed loops for `seconds` after a warm-up, with the time and the server's CPU time. */
async function throughput(
  target: Target,
  seconds: number,
): Promise<{ calls: number; ms: number; cpuMs: number | undefined }> {
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
    const cpuBefore = cpuMsOf(target.pid);
    const started = performance.now();
    const counts = await Promise.all(clients.map((client) => loop(client, started + seconds * 1000)));
    const ms = performance.now() - started;
    const cpuAfter = cpuMsOf(target.pid);
    return {
      calls: counts.reduce((sum, count) => sum + count, 0),
      ms,
      cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** Sequential latency of one client, in ms, after a warm-up. */
async function latency(target: Target, calls: number): Promise<number[]> {
  const client = await target.connect();
  try {
    const times: number[] = [];
    for (let index = 0; index < calls + 100; index++) {
      const started = performance.now();
      const result = await client.callTool({ name: target.tool, arguments: {} });
      if (result.isError) throw new Error(`${target.name}: ${JSON.stringify(result.content)}`);
      if (index >= 100) times.push(performance.now() - started);
    }
    return times;
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
const bare = await startBare(false);
const bareStateful = await startBare(true);
try {
  const credential = await enrolledCredential(gateway.url, path.join(dir, "server"));
  const targets: Target[] = [
    {
      name: "bare official SDK server, stateless (a server per request)",
      tool: "health",
      pid: bare.child.pid,
      connect: () => connectMcp(bare.url, "unused"),
    },
    {
      name: "bare official SDK server, stateful (a server per session, kept)",
      tool: "health",
      pid: bareStateful.child.pid,
      connect: () => connectMcp(bareStateful.url, "unused"),
    },
    {
      name: "ivoai gateway, /v1/mcp/context",
      tool: "context_health",
      pid: gateway.child.pid,
      connect: () => connectMcp(`${gateway.url}/v1/mcp/context`, credential),
    },
  ];
  const totals = targets.map(() => ({
    times: [] as number[],
    calls: 0,
    ms: 0,
    cpuMs: 0 as number | undefined,
  }));
  for (let round = 0; round < rounds; round++) {
    for (const [index, target] of targets.entries()) {
      const total = totals[index] as (typeof totals)[0];
      total.times.push(...(await latency(target, Math.ceil(sequential / rounds))));
      const run = await throughput(target, seconds / rounds);
      total.calls += run.calls;
      total.ms += run.ms;
      total.cpuMs =
        total.cpuMs === undefined || run.cpuMs === undefined ? undefined : total.cpuMs + run.cpuMs;
    }
  }
  const rows = targets.map((target, index) => {
    const total = totals[index] as (typeof totals)[0];
    const times = total.times.sort((a, b) => a - b);
    return {
      name: target.name,
      rate: total.calls / (total.ms / 1000),
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      cpuPerCall: total.cpuMs === undefined ? undefined : (total.cpuMs * 1000) / total.calls,
    };
  });
  const [reference, stateful, ours] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  const lines = [
    "# gateway overhead",
    "",
    `${machineLine()}, ${new Date().toISOString()}.`,
    "",
    `Same run, same official MCP client (one connection per client, JSON responses), each server`,
    `in its own process: ${CLIENTS} closed-loop clients for ${seconds} s and sequential latency over ${sequential} calls,`,
    `in ${rounds} rounds alternating the servers (each round warms up: 1 s of loops, 100 calls). The gateway runs`,
    "with authentication, guardrail, envelope and audit. CPU per call: the server process's user + system time",
    "during the closed loops over the calls made (clock ticks of 10 ms, so meaningful over thousands of calls).",
    "",
    `| server | calls/s (${CLIENTS} clients) | sequential p50 ms | p95 ms | server CPU µs/call |`,
    "|---|---|---|---|---|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.rate.toFixed(0)} | ${row.p50.toFixed(2)} | ${row.p95.toFixed(2)} | ${
          row.cpuPerCall === undefined ? "n/a" : row.cpuPerCall.toFixed(0)
        } |`,
    ),
    "",
    `Gateway / bare stateless: **${(ours.rate / reference.rate).toFixed(2)}×** the calls/s (goal ≥ 1.0×); sequential p50`,
    `**${signed(ours.p50 - reference.p50)} ms** (goal ≤ +0.2 ms).`,
    "",
    `Gateway / bare stateful: **${(ours.rate / stateful.rate).toFixed(2)}×** the calls/s (goal ≥ 1.0×); sequential p50`,
    `**${signed(ours.p50 - stateful.p50)} ms**; server CPU per call ${
      ours.cpuPerCall === undefined || stateful.cpuPerCall === undefined
        ? "n/a"
        : `${(ours.cpuPerCall / stateful.cpuPerCall).toFixed(2)}×`
    }.`,
    "",
    `Load average (1 min) at the end: ${loadavg()[0]?.toFixed(2)} on ${availableParallelism()} CPUs.`,
    "",
  ];
  const report = lines.join("\n");
  process.stdout.write(report);
  if (save) {
    await mkdir("bench/results", { recursive: true });
    await writeFile("bench/results/gateway.md", report);
  }
} finally {
  bare.child.kill("SIGTERM");
  bareStateful.child.kill("SIGTERM");
  await gateway.stop();
  await cleanup();
}
