// Lexical-only ingestion throughput (MB/s of text) through connector add + ingest, against the 20 MB/s target.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { generateCorpus } from "./lib/corpus.js";
import { createBenchTree, machineLine } from "./lib/server-tree.js";

const megabytes = Number(process.argv.find((arg) => arg.startsWith("--mb="))?.slice(5) ?? "100");
const tree = await createBenchTree("ingest");
try {
  const corpus = await generateCorpus(
    path.join(tree.root, "corpus"),
    Math.ceil((megabytes * 1e6) / 16_000),
    16_000,
  );
  const context = await tree.open();
  await context.addConnector({ name: "bench", type: "filesystem", path: corpus.dir });
  const started = performance.now();
  const [first] = await context.ingest(["bench"]);
  const seconds = (performance.now() - started) / 1000;
  const again = performance.now();
  const [second] = await context.ingest(["bench"]);
  const secondSeconds = (performance.now() - again) / 1000;
  context.close();
  const mbps = corpus.bytes / 1e6 / seconds;
  const report = [
    "# ingest",
    "",
    `Lexical-only ingest of a generated corpus (${corpus.files} markdown files, ${(corpus.bytes / 1e6).toFixed(1)} MB). ${machineLine()}, ${new Date().toISOString()}.`,
    "",
    "| run | documents | chunks | seconds | MB/s | target |",
    "|---|---|---|---|---|---|",
    `| first ingest | ${first?.added} added | ${first?.chunks} | ${seconds.toFixed(2)} | **${mbps.toFixed(1)}** | ≥ 20 MB/s |`,
    `| re-ingest, unchanged | ${second?.unchanged} unchanged | 0 | ${secondSeconds.toFixed(2)} | ${(corpus.bytes / 1e6 / secondSeconds).toFixed(1)} | |`,
    "",
  ].join("\n");
  process.stdout.write(`${report}\n`);
  if (!process.argv.includes("--no-save")) await writeFile(path.resolve("bench/results/ingest.md"), report);
} finally {
  await tree.cleanup();
}
