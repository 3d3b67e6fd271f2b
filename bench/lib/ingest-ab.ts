// `npm run bench -- ingest --ab=<revision>`: `ivoai server ingest` of this tree's binary and of another revision's,
// alternating (which goes first alternates too) on one generated corpus, each run on a fresh server tree. This
// host's speed follows its neighbours (the same code ran 30–43 MB/s within one hour), so only runs side by side
// compare two builds. Wall time and the child's CPU time (all its threads) per run, medians per build, and
// the CPU stolen by the hypervisor during each run.
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { percentile } from "./ir.js";
import { childrenCpuMs, stolenCpuMs } from "./proc-cpu.js";
import { type BuiltRevision, buildRevision, currentRevision, runBin } from "./revision-build.js";
import { serverInitArgs } from "./server-tree.js";

interface IngestRun {
  seconds: number;
  cpuSeconds: number | undefined;
  stealSeconds: number | undefined;
  added: number;
}

async function ingestOnce(side: BuiltRevision, corpus: string, scratch: string): Promise<IngestRun> {
  const root = await mkdtemp(path.join(scratch, "tree-"));
  try {
    await runBin(side.bin, serverInitArgs(root));
    await runBin(side.bin, [
      "server",
      "connector",
      "add",
      "bench",
      "--type",
      "filesystem",
      "--path",
      corpus,
      "--root",
      root,
    ]);
    const cpuBefore = childrenCpuMs();
    const stealBefore = stolenCpuMs();
    const started = performance.now();
    const stdout = await runBin(side.bin, ["server", "ingest", "--root", root, "--json"]);
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = childrenCpuMs();
    const stealAfter = stolenCpuMs();
    const summary = (JSON.parse(stdout) as { summaries: { added: number; complete: boolean }[] })
      .summaries[0];
    if (!summary?.complete)
      throw new Error(`${side.label}: the ingest did not complete: ${stdout.slice(0, 500)}`);
    return {
      seconds,
      cpuSeconds:
        cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / 1000 : undefined,
      stealSeconds:
        stealBefore !== undefined && stealAfter !== undefined ? (stealAfter - stealBefore) / 100 : undefined,
      added: summary.added,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** The report's lines: one row per run, then the medians and the per-round ratio of this tree to the revision. */
export async function ingestAb(
  revision: string,
  corpus: { dir: string; files: number; bytes: number },
  scratch: string,
  rounds: number,
): Promise<string[]> {
  const sides = [await currentRevision(), await buildRevision(revision)];
  const mb = corpus.bytes / 1e6;
  const runs: IngestRun[][] = [[], []];
  const rows: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const index of order) {
      const side = sides[index] as BuiltRevision;
      const result = await ingestOnce(side, corpus.dir, scratch);
      if (result.added !== corpus.files)
        throw new Error(`${side.label}: added ${result.added} of ${corpus.files} files`);
      (runs[index] as IngestRun[]).push(result);
      const cpu = result.cpuSeconds === undefined ? "–" : result.cpuSeconds.toFixed(1);
      const steal = result.stealSeconds === undefined ? "–" : result.stealSeconds.toFixed(1);
      const row = `| ${round + 1} | ${side.short} | ${result.seconds.toFixed(2)} | ${cpu} | ${steal} | ${(mb / result.seconds).toFixed(1)} |`;
      process.stderr.write(`${row}\n`);
      rows.push(row);
    }
  }
  const ours = runs[0] as IngestRun[];
  const theirs = runs[1] as IngestRun[];
  const cpuMedian = (list: IngestRun[]) => {
    const values = list.flatMap((entry) => (entry.cpuSeconds === undefined ? [] : [entry.cpuSeconds]));
    return values.length > 0 ? median(values).toFixed(1) : "–";
  };
  const summary = (side: BuiltRevision, list: IngestRun[]) => {
    const speeds = list.map((entry) => mb / entry.seconds);
    return `| ${side.short} | **${median(speeds).toFixed(1)}** | ${Math.min(...speeds).toFixed(1)}–${Math.max(...speeds).toFixed(1)} | ${cpuMedian(list)} |`;
  };
  const ratios = ours.map((entry, round) => (theirs[round] as IngestRun).seconds / entry.seconds);
  return [
    `\`ivoai server ingest\` of ${corpus.files} files (${mb.toFixed(1)} MB) by this tree (${sides[0]?.label}) and by ${sides[1]?.label}, ${rounds} rounds, alternating, each run on a fresh server tree.`,
    "",
    "| round | build | seconds | CPU seconds | stolen seconds | MB/s |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    "| build | MB/s, median | range | CPU seconds, median |",
    "|---|---|---|---|",
    summary(sides[0] as BuiltRevision, ours),
    summary(sides[1] as BuiltRevision, theirs),
    "",
    `Speed of this tree over the revision, per round: ${ratios.map((ratio) => `${ratio.toFixed(2)}×`).join(", ")} (median ${median(ratios).toFixed(2)}×).`,
    "",
  ];
}
