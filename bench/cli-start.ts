// `ivoai --version`, `ivoai hook claude …` and `ivoai hook statusline`, spawn to exit, beside `node -e 0` (the
// floor no CLI goes below) in the same run. The hooks get what Claude Code sends: a PostToolUse payload, posted
// to a local endpoint answering 202 (standing in for the session router's /hooks/memory, so the figure is the
// CLI's own cost), and a status line payload with quota windows (recorded in a temporary state directory).
// Options: --runs N (default 40), --baseline FILE (another build's entry, e.g. the one-file bundle, measured
// alongside), --no-save.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { percentile } from "./lib/ir.js";
import { childrenCpuMs } from "./lib/proc-cpu.js";
import { machineLine } from "./lib/server-tree.js";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "40" },
    baseline: { type: "string" },
    "no-save": { type: "boolean", default: false },
  },
});
const RUNS = Number(values.runs);
const WARMUP = 3;
const GOAL_MS = 150;
const BIN = path.resolve("dist/ivoai.mjs");

// The bench's own folder: an empty module, the status line's state, and the project a hook payload names.
const workDir = await mkdtemp(path.join(tmpdir(), "ivoai-bench-cli-start-"));
const project = path.join(workDir, "acme");

/** What Claude Code writes to a PostToolUse hook's stdin. */
const TOOL_USE = JSON.stringify({
  session_id: "7c0f9a6e-2b1d-4c51-9a55-0d7f3f1e2a10",
  transcript_path: path.join(workDir, ".claude/projects/acme/7c0f9a6e.jsonl"),
  cwd: project,
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: "npm test -- --run src/billing", description: "Run the billing tests" },
  tool_response: { stdout: "✓ 48 tests passed\n".repeat(40), stderr: "", interrupted: false },
});

/** What Claude Code writes to the status line command of a subscriber's session (it runs it on every update). */
const STATUS_LINE = JSON.stringify({
  session_id: "7c0f9a6e-2b1d-4c51-9a55-0d7f3f1e2a10",
  model: { id: "claude-opus-4-1", display_name: "Opus" },
  workspace: { current_dir: project, project_dir: project },
  rate_limits: {
    five_hour: { used_percentage: 42, resets_at: Math.floor(Date.now() / 1000) + 3600 },
    seven_day: { used_percentage: 17, resets_at: Math.floor(Date.now() / 1000) + 86_400 },
  },
});

let delivered = 0;
const endpoint = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    delivered += 1;
    response.writeHead(202).end();
  });
});
endpoint.listen(0, "127.0.0.1");
await once(endpoint, "listening");
const hookEnv = {
  IVOAI_ROUTER_HOOKS_URL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/hooks/memory`,
  IVOAI_ROUTER_TOKEN: "bench-router-capability",
  IVOAI_SESSION_ID: "ses_bench",
  IVOAI_PROJECT: "acme",
};

interface Case {
  label: string;
  args: string[];
  input?: string;
  env?: Record<string, string>;
  /** A reference (no CLI), not held to the goal. */
  reference?: boolean;
  /** The run must post one event to the endpoint. */
  delivers?: boolean;
  /** Throws when the run did not do its job. */
  check(stdout: string, code: number | null): void;
}

const expectCode = (code: number | null) => {
  if (code !== 0) throw new Error(`exited ${code}`);
};
const versionCase = (label: string, entry: string): Case => ({
  label,
  args: [entry, "--version"],
  check: (stdout, code) => {
    expectCode(code);
    if (!/^\d+\.\d+\.\d+/.test(stdout)) throw new Error(`printed ${JSON.stringify(stdout)}`);
  },
});
const hookCase = (label: string, entry: string): Case => ({
  label,
  args: [entry, "hook", "claude", "tool_used"],
  input: TOOL_USE,
  env: hookEnv,
  delivers: true,
  check: (_stdout, code) => expectCode(code),
});

// An empty ES module: the floor plus Node's ES module loader, which any ESM program pays.
const emptyModule = path.join(workDir, "empty.mjs");
await writeFile(emptyModule, "");
const stateHome = path.join(workDir, "state");
const statusLineCase = (label: string, entry: string): Case => ({
  label,
  args: [entry, "hook", "statusline"],
  input: STATUS_LINE,
  env: { XDG_STATE_HOME: stateHome },
  check: (stdout, code) => {
    expectCode(code);
    if (!stdout.includes("42%")) throw new Error(`printed ${JSON.stringify(stdout)}`);
  },
});
const cases: Case[] = [
  {
    label: "`node -e 0` (floor)",
    args: ["-e", "0"],
    reference: true,
    check: (_out, code) => expectCode(code),
  },
  {
    label: "`node empty.mjs`",
    args: [emptyModule],
    reference: true,
    check: (_out, code) => expectCode(code),
  },
  versionCase("`ivoai --version`", BIN),
  hookCase("`ivoai hook claude tool_used`", BIN),
  statusLineCase("`ivoai hook statusline`", BIN),
];
if (values.baseline) {
  const baseline = path.resolve(values.baseline);
  cases.push(
    versionCase("`--version`, baseline build", baseline),
    hookCase("`hook claude`, baseline build", baseline),
    statusLineCase("`hook statusline`, baseline build", baseline),
  );
}

function runOnce(entry: Case): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = delivered;
    const started = performance.now();
    const child = spawn(process.execPath, entry.args, {
      env: { ...process.env, ...entry.env },
      stdio: ["pipe", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      try {
        entry.check(stdout, code);
        if (entry.delivers && delivered !== sent + 1)
          throw new Error(`the endpoint received ${delivered - sent} events, not 1`);
        resolve(ms);
      } catch (error) {
        reject(new Error(`${entry.label}: ${(error as Error).message}`));
      }
    });
    child.stdin.end(entry.input ?? "");
  });
}

// Rounds interleave the cases, so that each sees the same machine state; the first rounds warm the file cache.
const times = new Map<Case, number[]>(cases.map((entry) => [entry, []]));
const cpu = new Map<Case, number>(cases.map((entry) => [entry, 0]));
for (let round = 0; round < WARMUP + RUNS; round++) {
  for (const entry of cases) {
    const before = childrenCpuMs();
    const ms = await runOnce(entry);
    const after = childrenCpuMs();
    if (round < WARMUP) continue;
    times.get(entry)?.push(ms);
    if (before !== undefined && after !== undefined) cpu.set(entry, (cpu.get(entry) ?? 0) + after - before);
  }
}
const cpuKnown = childrenCpuMs() !== undefined;
endpoint.close();
await rm(workDir, { recursive: true, force: true });

async function bytes(file: string): Promise<number> {
  return (await stat(file)).size;
}
const chunksDir = path.join(path.dirname(BIN), "chunks");
const chunkFiles = (await readdir(chunksDir)).filter((name) => name.endsWith(".mjs"));
let chunkBytes = 0;
for (const name of chunkFiles) chunkBytes += await bytes(path.join(chunksDir, name));

const floor = percentile(
  [...(times.get(cases[0] as Case) ?? [])].sort((a, b) => a - b),
  50,
);
const rows = cases.map((entry) => {
  const sorted = [...(times.get(entry) ?? [])].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const above = p50 - floor;
  const cpuMean = cpuKnown ? ((cpu.get(entry) ?? 0) / RUNS).toFixed(0) : "n/a";
  const goal = entry.reference ? "" : p50 <= GOAL_MS ? `≤ ${GOAL_MS}: yes` : `≤ ${GOAL_MS}: NO`;
  return `| ${entry.label} | ${p50.toFixed(0)} | ${percentile(sorted, 90).toFixed(0)} | ${(sorted[0] ?? Number.NaN).toFixed(0)} | ${entry === cases[0] ? "—" : `${above < 0 ? "−" : "+"}${Math.abs(above).toFixed(0)}`} | ${goal} | ${cpuMean} |`;
});
const report = [
  "# cli-start",
  "",
  `Wall time from spawn to exit of \`node dist/ivoai.mjs …\`, ${RUNS} runs each after ${WARMUP} warm-up rounds, the cases interleaved round by round. The hook gets Claude Code's PostToolUse payload (${TOOL_USE.length} bytes) on stdin and the session's environment, and posts the event to a local endpoint answering 202 (every run checked to have delivered it); the status line hook gets Claude's status line payload with two quota windows and records them (every run checked to print them). CPU is each child's user + system time (/proc/self/stat of the bench, 10 ms ticks, mean over the runs): a busy machine stretches wall time far more than it. ${machineLine()}, ${new Date().toISOString()}.`,
  "",
  "| command | p50 ms | p90 ms | min ms | p50 above the floor | goal (p50) | CPU ms (mean, user + sys) |",
  "|---|---|---|---|---|---|---|",
  ...rows,
  "",
  `The entry dist/ivoai.mjs is ${((await bytes(BIN)) / 1024).toFixed(0)} KB; the ${chunkFiles.length} chunks in dist/chunks hold ${(chunkBytes / 1024 / 1024).toFixed(2)} MB, loaded by the commands that need them.`,
  "",
].join("\n");
process.stdout.write(`${report}\n`);
if (!values["no-save"]) await writeFile(path.resolve("bench/results/cli-start.md"), report);
