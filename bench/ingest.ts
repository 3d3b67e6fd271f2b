// Lexical-only ingest (connector add + ingest, worker threads as `ivoai server ingest` runs them) of a generated
// corpus: first-ingest MB/s against ≥ 40 MB/s, and the re-ingest of the unchanged corpus against ≤ 10 s.
// `--mb=1000` runs the 1 GB corpus end to end. CPU seconds (all threads) are reported beside wall time, since
// wall time on a shared machine depends on what else runs. References in the same run: `wc -w` and SQLite FTS5
// over the same files (bench/lib/ingest-references.ts), and the index save `server ingest` ends with.
// `--ab=<revision> [--rounds=N]` compares `ivoai server ingest` of this tree and of that revision instead, in
// alternating runs (bench/lib/ingest-ab.ts).
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { contextConfigSchema } from "../src/config/server-config.js";
import { generateCorpus } from "./lib/corpus.js";
import { ingestAb } from "./lib/ingest-ab.js";
import { fts5Insert, wcWords } from "./lib/ingest-references.js";
import { mainThreadCpuMs } from "./lib/proc-cpu.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const megabytes = Number(process.argv.find((arg) => arg.startsWith("--mb="))?.slice(5) ?? "100");
const abRevision = process.argv.find((arg) => arg.startsWith("--ab="))?.slice(5);
const abRounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "3");
const save = !process.argv.includes("--no-save");
// --embedder=corpus: also ingest the same corpus with the corpus embedder (model training + vectors), same run.
const withCorpus = process.argv.includes("--embedder=corpus");
if (!Number.isInteger(abRounds) || abRounds < 1) {
  process.stderr.write("ingest: --rounds wants a whole number of at least 1\n");
  process.exit(2);
}
const tree = await createBenchTree("ingest");
try {
  const generating = performance.now();
  const corpus = await generateCorpus(
    path.join(tree.root, "corpus"),
    Math.ceil((megabytes * 1e6) / 16_000),
    16_000,
  );
  process.stderr.write(
    `corpus: ${corpus.files} files, ${(corpus.bytes / 1e6).toFixed(1)} MB in ${((performance.now() - generating) / 1000).toFixed(1)} s\n`,
  );
  if (abRevision !== undefined) {
    const lines = await ingestAb(abRevision, corpus, tree.root, abRounds);
    const report = ["# ingest, A/B", "", `${machineLine()}, ${new Date().toISOString()}.`, "", ...lines].join(
      "\n",
    );
    process.stdout.write(`${report}\n`);
    if (save) await writeFile(path.resolve("bench/results/ingest-ab.md"), report);
  } else {
    const context = await tree.open();
    await context.addConnector({ name: "bench", type: "filesystem", path: corpus.dir });
    const measure = async () => {
      const cpu = process.cpuUsage();
      const mainBefore = mainThreadCpuMs();
      const started = performance.now();
      const [summary] = await context.ingest(["bench"]);
      const used = process.cpuUsage(cpu);
      const mainAfter = mainThreadCpuMs();
      return {
        summary,
        seconds: (performance.now() - started) / 1000,
        cpuSeconds: (used.user + used.system) / 1e6,
        mainCpuSeconds:
          mainBefore !== undefined && mainAfter !== undefined ? (mainAfter - mainBefore) / 1000 : undefined,
      };
    };
    const first = await measure();
    // What `server ingest` does last: the search index built and saved for the next start.
    const saving = performance.now();
    const saved = await context.saveIndex();
    const saveSeconds = (performance.now() - saving) / 1000;
    const second = await measure();
    await context.close();
    // The references, over the same files (in the OS page cache, as for the ingests).
    const wc = await wcWords(corpus.dir);
    const fts5 = await fts5Insert(corpus.dir, path.join(tree.root, "fts5.sqlite"));
    let corpusRun: { seconds: number; cpuSeconds: number } | undefined;
    if (withCorpus) {
      const embedder = contextConfigSchema.parse({ embedder: { provider: "corpus" } }).embedder;
      const hybridTree = await createBenchTree("ingest-corpus", (config) => ({
        ...config,
        context: { ...config.context, embedder },
      }));
      try {
        const hybrid = await hybridTree.open();
        await hybrid.addConnector({ name: "bench", type: "filesystem", path: corpus.dir });
        const cpu = process.cpuUsage();
        const started = performance.now();
        await hybrid.ingest(["bench"]);
        const used = process.cpuUsage(cpu);
        corpusRun = {
          seconds: (performance.now() - started) / 1000,
          cpuSeconds: (used.user + used.system) / 1e6,
        };
        await hybrid.close();
      } finally {
        await hybridTree.cleanup();
      }
    }
    const mb = corpus.bytes / 1e6;
    const cpuCell = (run: { cpuSeconds: number; mainCpuSeconds: number | undefined }) =>
      `${run.cpuSeconds.toFixed(2)}${run.mainCpuSeconds === undefined ? "" : ` (${run.mainCpuSeconds.toFixed(2)})`}`;
    const mbps = mb / first.seconds;
    const report = [
      "# ingest",
      "",
      `Lexical-only ingest of a generated corpus (${corpus.files} markdown files, ${mb.toFixed(1)} MB). ${machineLine()}, ${new Date().toISOString()}.`,
      "",
      "| run | documents | chunks | seconds | CPU seconds (main thread) | MB/s | goal |",
      "|---|---|---|---|---|---|---|",
      `| first ingest | ${first.summary?.added} added | ${first.summary?.chunks} | ${first.seconds.toFixed(2)} | ${cpuCell(first)} | **${mbps.toFixed(1)}** | ≥ 40 MB/s |`,
      ...(corpusRun
        ? [
            `| first ingest, corpus embedder (training + vectors) | ${first.summary?.added} added | ${first.summary?.chunks} | ${corpusRun.seconds.toFixed(2)} | ${corpusRun.cpuSeconds.toFixed(2)} | **${(mb / corpusRun.seconds).toFixed(1)}** | ≥ 40 MB/s (cost against lexical-only: ${(((corpusRun.seconds - first.seconds) / first.seconds) * 100).toFixed(0)} % wall, ${(((corpusRun.cpuSeconds - first.cpuSeconds) / first.cpuSeconds) * 100).toFixed(0)} % CPU) |`,
          ]
        : []),
      `| the search index saved for the next start (the last step of \`server ingest\`) | | ${saved.chunks} | ${saveSeconds.toFixed(2)} | | | |`,
      `| reference: \`wc -w\` over the same files (${(wc.words / 1e6).toFixed(1)}M words) | ${corpus.files} | | ${wc.seconds.toFixed(2)} | | ${(mb / wc.seconds).toFixed(1)} | ingest ≥ 0.3× (this run: **${(wc.seconds / first.seconds).toFixed(2)}×**) |`,
      `| reference: SQLite FTS5 reading and inserting the same files (unicode61, 500 per transaction) | ${fts5.rows} | | ${fts5.seconds.toFixed(2)} | | ${(mb / fts5.seconds).toFixed(1)} | ingest ≥ 4× (this run: **${(fts5.seconds / first.seconds).toFixed(2)}×**) |`,
      `| re-ingest, unchanged | ${second.summary?.unchanged} unchanged | ${second.summary?.chunks} | **${second.seconds.toFixed(2)}** | ${cpuCell(second)} | ${(mb / second.seconds).toFixed(1)} | ≤ 10 s at 1 GB (${((second.seconds * 1000) / mb).toFixed(2)} s at this size scaled to 1 GB) |`,
      "",
    ].join("\n");
    process.stdout.write(`${report}\n`);
    if (save) await writeFile(path.resolve(`bench/results/ingest${withCorpus ? "-corpus" : ""}.md`), report);
  }
} finally {
  await tree.cleanup();
}
