// KnowledgeRouter overhead versus calling the server directly, and fan-out with one stalled source.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { addServer } from "../src/client/connections/connect.js";
import { openRegistry } from "../src/client/connections/registry.js";
import { percentile } from "./lib/ir.js";
import { machineLine, serverInitArgs } from "./lib/server-tree.js";

const BIN = path.resolve("dist/ivoai.mjs");
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`ivoai ${args.join(" ")} exited ${code}`)),
    );
  });
const foreground = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ child: ChildProcess; ready: Record<string, unknown> }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    createInterface({ input: child.stdout }).once("line", (line) =>
      resolve({ child, ready: JSON.parse(line) }),
    );
    child.once("exit", (code) => reject(new Error(`ivoai ${args.join(" ")} exited ${code}`)));
  });
const client = async (url: string, token: string) => {
  const mcp = new Client({ name: "bench", version: "1" });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return mcp;
};

const work = await mkdtemp(path.join(tmpdir(), "ivoai-bench-router-"));
const children: ChildProcess[] = [];
try {
  const env = {
    XDG_CONFIG_HOME: path.join(work, "xdg-config"),
    XDG_STATE_HOME: path.join(work, "xdg-state"),
  };
  const registry = openRegistry({ ...process.env, ...env });
  const servers: { url: string; child: ChildProcess; token: string }[] = [];
  for (const name of ["alpha", "beta", "gamma"]) {
    const root = path.join(work, name);
    const docs = path.join(work, `${name}-docs`);
    await run(serverInitArgs(root));
    await spawnDocs(docs, name);
    await run(["server", "connector", "add", "docs", "--type", "filesystem", "--path", docs, "--root", root]);
    await run(["server", "ingest", "--root", root]);
    const { child, ready } = await foreground(["server", "start", "--root", root]);
    children.push(child);
    const { code } = JSON.parse(await run(["server", "enrollment", "create", "--root", root, "--json"])) as {
      code: string;
    };
    const { profile } = await addServer(registry, {
      alias: name,
      url: String(ready.url),
      purpose: name,
      code,
    });
    servers.push({
      url: String(ready.url),
      child,
      token: (await registry.credentialOf(profile.id)) as string,
    });
  }

  // Overhead: the same calls straight to the server and through a router (one source: pass-through),
  // interleaved call by call so that both see the same machine state.
  const direct = await client(`${servers[0]?.url}/v1/mcp/context`, servers[0]?.token as string);
  const single = await foreground(["router", "serve", "--json", "--knowledge-source", "alpha"], env);
  children.push(single.child);
  const endpoints = single.ready.endpoints as { context: string };
  const routed = await client(endpoints.context, String(single.ready.capability));
  const directTimes: number[] = [];
  const routedTimes: number[] = [];
  const differences: number[] = [];
  for (let i = 0; i < 2200; i++) {
    const args = { name: "context_search", arguments: { query: `deploy pipeline ${i % 10}`, limit: 5 } };
    const a = performance.now();
    await direct.callTool(args);
    const b = performance.now();
    await routed.callTool(args);
    const c = performance.now();
    if (i >= 200) {
      directTimes.push(b - a);
      routedTimes.push(c - b);
      differences.push(c - b - (b - a));
    }
  }
  directTimes.sort((x, y) => x - y);
  routedTimes.sort((x, y) => x - y);
  differences.sort((x, y) => x - y);
  await direct.close();
  await routed.close();
  single.child.kill("SIGTERM");

  // Fan-out to three purposes with one stalled source.
  const deadlineMs = 300;
  const fan = await foreground(["router", "serve", "--json", "--deadline-ms", String(deadlineMs)], env);
  children.push(fan.child);
  const fanClient = await client(
    (fan.ready.endpoints as { context: string }).context,
    String(fan.ready.capability),
  );
  await fanClient.callTool({ name: "context_search", arguments: { query: "warm up" } });
  servers[2]?.child.kill("SIGSTOP");
  const stalled: { ms: number; partial: boolean; status: string }[] = [];
  for (let i = 0; i < 10; i++) {
    const started = performance.now();
    const result = await fanClient.callTool({
      name: "context_search",
      arguments: { query: "deploy pipeline" },
    });
    // The text item is for models; programs read the federation from structuredContent.
    const federation = (
      result.structuredContent as
        | { federation: { partial: boolean; sources: { alias: string; status: string }[] } }
        | undefined
    )?.federation;
    if (!federation) throw new Error(`no federation in the router's answer: ${JSON.stringify(result)}`);
    stalled.push({
      ms: performance.now() - started,
      partial: federation.partial,
      status: federation.sources.find((source) => source.alias === "gamma")?.status ?? "missing",
    });
  }
  servers[2]?.child.kill("SIGCONT");
  await fanClient.close();

  const p50 = (values: number[]) => percentile(values, 50);
  const added = p50(differences);
  const first = stalled[0] as { ms: number; partial: boolean; status: string };
  const report = [
    "# router",
    "",
    `context_search (limit 5) over loopback HTTP with one persistent official MCP client; server and router in their own processes. ${machineLine()}, ${new Date().toISOString()}.`,
    "",
    "| path | p50 ms | p99 ms |",
    "|---|---|---|",
    `| direct to the server | ${p50(directTimes).toFixed(2)} | ${percentile(directTimes, 99).toFixed(2)} |`,
    `| through the router (one source) | ${p50(routedTimes).toFixed(2)} | ${percentile(routedTimes, 99).toFixed(2)} |`,
    `| **added by the router** (median of paired differences) | **${added.toFixed(2)}** | target p50 ≤ 1 ms |`,
    "",
    `Fan-out to three sources (three purposes), one stopped with SIGSTOP, deadline ${deadlineMs} ms:`,
    "",
    "| call | ms | partial | stalled source | target |",
    "|---|---|---|---|---|",
    ...stalled.map(
      (entry, index) =>
        `| ${index + 1} | ${entry.ms.toFixed(1)} | ${entry.partial} | ${entry.status} | ${index === 0 ? `≤ ${deadlineMs + 20} ms, partial` : ""} |`,
    ),
    "",
    `First call within deadline + 20 ms: ${first.ms <= deadlineMs + 20 ? "yes" : "NO"}; after three timeouts the circuit opens and the stalled source is skipped at once.`,
    "",
  ].join("\n");
  process.stdout.write(`${report}\n`);
  if (!process.argv.includes("--no-save")) await writeFile(path.resolve("bench/results/router.md"), report);
} finally {
  for (const child of children) {
    child.kill("SIGCONT");
    child.kill("SIGTERM");
  }
  await rm(work, { recursive: true, force: true });
}

async function spawnDocs(dir: string, name: string) {
  const { mkdir } = await import("node:fs/promises");
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < 50; i++) {
    await writeFile(
      path.join(dir, `doc-${i}.md`),
      `# ${name} doc ${i}\n\nHow to deploy with pipeline ${i % 10} on ${name}.`,
    );
  }
}
