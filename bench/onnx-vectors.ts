// The two vector formats a model embedder (onnx, tei) stores, side by side in one run: int8 (one scale per vector)
// against float32 at 100,000 × 384 (multilingual-e5-small's width), through the production pack and scan
// (vector-matrix.ts: WebAssembly SIMD where it runs). Vectors are a seeded stand-in for sentence embeddings: a
// low-rank gaussian (topics mixed into every axis) plus isotropic noise, L2-normalised; queries are noisy copies
// of random rows. Reports int8's recall@10 against the exact float32 top 10, scan time, bytes and pack time.
// `--vectors N --dims D --queries Q --seed S`, `--json`, `--no-save`.
import { writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import path from "node:path";
import { normalize } from "../src/server/context/embedder.js";
import { gaussian } from "../src/server/context/lsa.js";
import {
  packMatrix,
  quantize,
  type StoredVector,
  type VectorFormat,
} from "../src/server/context/vector-matrix.js";
import { mulberry32 } from "../src/shared/random.js";
import { mean, percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const ROWS = arg("vectors", 100_000);
const DIMS = arg("dims", 384);
const QUERIES = arg("queries", 200);
const SEED = arg("seed", 7);
const TOPICS = 32;
const K = 10;

function corpus() {
  const rng = { uniform: mulberry32(SEED), normal: gaussian(SEED + 1) };
  const topics = Array.from({ length: TOPICS }, () => Float32Array.from({ length: DIMS }, rng.normal));
  const sample = () => {
    const vector = new Float32Array(DIMS);
    // A few topics per text, with gaussian weights, and noise of a third of the signal's size.
    for (let t = 0; t < 3; t++) {
      const topic = topics[Math.floor(rng.uniform() * TOPICS)] as Float32Array;
      const weight = rng.normal();
      for (let d = 0; d < DIMS; d++) vector[d] = (vector[d] as number) + weight * (topic[d] as number);
    }
    for (let d = 0; d < DIMS; d++) vector[d] = (vector[d] as number) + 0.6 * rng.normal();
    return normalize(vector);
  };
  const rows = Array.from({ length: ROWS }, sample);
  const queries = Array.from({ length: QUERIES }, () => {
    const near = rows[Math.floor(rng.uniform() * ROWS)] as Float32Array;
    const noise = sample();
    return normalize(near.map((value, d) => value + 0.8 * (noise[d] as number)));
  });
  return { rows, queries };
}

function measure(format: VectorFormat, rows: Float32Array[], queries: Float32Array[]) {
  const stored: StoredVector[] = format === "int8" ? rows.map(quantize) : rows;
  const packStart = performance.now();
  const matrix = packMatrix(stored, DIMS, format);
  const packMs = performance.now() - packStart;
  const times: number[] = [];
  const tops: number[][] = [];
  for (const query of queries.slice(0, 10)) matrix.search(query, K); // warm-up
  for (const query of queries) {
    const start = performance.now();
    const hits = matrix.search(query, K);
    times.push(performance.now() - start);
    tops.push(hits.map((hit) => hit.row));
  }
  times.sort((a, b) => a - b);
  return {
    format,
    bytesPerVector: format === "int8" ? DIMS + 4 : DIMS * 4,
    packMs,
    p50: percentile(times, 50),
    p90: percentile(times, 90),
    p99: percentile(times, 99),
    tops,
  };
}

const loadBefore = loadavg()[0] as number;
const made = corpus();
const exact = measure("float32", made.rows, made.queries);
const int8 = measure("int8", made.rows, made.queries);
const recalls = int8.tops.map((top, q) => {
  const truth = new Set(exact.tops[q]);
  return top.filter((row) => truth.has(row)).length / K;
});
const firstSame = int8.tops.filter((top, q) => top[0] === exact.tops[q]?.[0]).length / QUERIES;
const loadAfter = loadavg()[0] as number;

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const row = (m: typeof exact) =>
  `| ${m.format} | ${m.p50.toFixed(2)} | ${m.p90.toFixed(2)} | ${m.p99.toFixed(2)} | ${(m.p50 / exact.p50).toFixed(2)}× | ${m.bytesPerVector} B, ${mb(m.bytesPerVector * ROWS)} MB | ${m.packMs.toFixed(0)} ms |`;
const report = [
  `# Vector formats: int8 against float32 (${ROWS.toLocaleString("en-US")} × ${DIMS}, ${QUERIES} queries, top ${K})`,
  "",
  `${machineLine()}; load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; seeded low-rank gaussian (${TOPICS} topics + noise, seed ${SEED}); production pack and scan (vector-matrix.ts).`,
  "",
  "| format | scan p50 ms | p90 | p99 | p50 vs float32 (reference) | memory | pack |",
  "|---|---|---|---|---|---|---|",
  row(exact),
  row(int8),
  "",
  `int8 recall@10 against the exact float32 top 10: mean **${mean(recalls).toFixed(4)}**, worst query ${Math.min(...recalls).toFixed(2)}; same first hit in ${(firstSame * 100).toFixed(1)} % of queries.`,
  "",
].join("\n");

if (process.argv.includes("--json")) {
  const { tops: _a, ...f32 } = exact;
  const { tops: _b, ...i8 } = int8;
  process.stdout.write(
    `${JSON.stringify({ rows: ROWS, dims: DIMS, queries: QUERIES, float32: f32, int8: i8, recall10: mean(recalls), worst: Math.min(...recalls), firstSame })}\n`,
  );
} else process.stdout.write(report);
if (!process.argv.includes("--no-save") && ROWS === 100_000 && DIMS === 384)
  await writeFile(path.resolve("bench/results/onnx-vectors.md"), report);
