// Every bench behind the README's tables, one after the other, each in its own process: `npm run bench -- all`
// runs them at their full sizes (long: an hour or more); `--quick` at sizes that keep the whole run within about
// ten minutes on 2 cores, where each figure's reference is still measured beside it in the same run. Each bench
// prints its own report; they are collected, with each bench's wall time and outcome, in
// bench/results/all[-quick].md. Benches given after the flags (`all --quick gateway memory`) run alone.
// Quick runs save nothing else: the full results in bench/results stay those of full runs.
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { machineLine } from "./lib/server-tree.js";

const quick = process.argv.includes("--quick");

/** Each bench with its quick arguments (`--no-save` added to every quick run). */
const BENCHES: [name: string, quickArgs: string[]][] = [
  ["gateway", ["--seconds=4", "--rounds=2", "--sequential=300"]],
  ["search-latency", ["--chunks=100000", "--queries=300", "--fts5-queries=40"]],
  ["memory", ["--pages=50000", "--queries=300"]],
  ["ingest", ["--mb=100"]],
  ["cli-start", ["--runs", "15"]],
  ["router", []],
  ["approvals", ["--pending=1000", "--pages=50000"]],
  ["auto", ["--rounds=2"]],
  ["retrieval", []],
];

interface Outcome {
  name: string;
  seconds: number;
  code: number | null;
  output: string;
}

/** Runs one bench through the bench runner (dist already built), echoing its output and keeping it. */
function runBench(name: string, args: string[]): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.resolve("scripts/bench.mjs"), name, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, IVOAI_BENCH_BUILT: "1" },
    });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      process.stdout.write(chunk);
    });
    child.once("error", reject);
    child.once("exit", (code) =>
      resolve({
        name,
        seconds: (performance.now() - started) / 1000,
        code,
        output: Buffer.concat(chunks).toString("utf8"),
      }),
    );
  });
}

const chosen = process.argv.slice(2).filter((value) => !value.startsWith("--"));
const unknown = chosen.filter((name) => !BENCHES.some(([known]) => known === name));
if (unknown.length > 0) {
  process.stderr.write(
    `bench all: no bench ${unknown.join(", ")} (${BENCHES.map(([name]) => name).join(", ")})\n`,
  );
  process.exit(2);
}
const plan = BENCHES.filter(([name]) => chosen.length === 0 || chosen.includes(name));
const began = performance.now();
const outcomes: Outcome[] = [];
for (const [index, [name, quickArgs]] of plan.entries()) {
  process.stderr.write(`bench all: [${index + 1}/${plan.length}] ${name}…\n`);
  const outcome = await runBench(name, quick ? [...quickArgs, "--no-save"] : []);
  process.stderr.write(
    `bench all: [${index + 1}/${plan.length}] ${name} ${outcome.code === 0 ? "done" : `FAILED (exit ${outcome.code})`} in ${outcome.seconds.toFixed(0)} s\n`,
  );
  outcomes.push(outcome);
}
const total = (performance.now() - began) / 1000;
const report = [
  `# bench all${quick ? " --quick" : ""}`,
  "",
  `${plan.length} benches in ${(total / 60).toFixed(1)} min${quick ? " (goal ≤ 10 min on 2 cores)" : ""}. ${machineLine()}, ${new Date().toISOString()}.`,
  "",
  "| bench | arguments | wall s | outcome |",
  "|---|---|---|---|",
  ...outcomes.map((outcome) => {
    const args = quick ? (BENCHES.find(([name]) => name === outcome.name)?.[1] ?? []).join(" ") : "";
    return `| ${outcome.name} | ${args} | ${outcome.seconds.toFixed(0)} | ${outcome.code === 0 ? "ok" : `failed (exit ${outcome.code})`} |`;
  }),
  "",
  ...outcomes.flatMap((outcome) => [`## ${outcome.name}`, "", outcome.output.trim(), ""]),
].join("\n");
if (chosen.length === 0)
  await writeFile(path.resolve("bench/results", quick ? "all-quick.md" : "all.md"), `${report}\n`);
process.exit(outcomes.every((outcome) => outcome.code === 0) ? 0 : 1);
