// `npm run bench -- <name> [args]`: bundles bench/<name>.ts with esbuild and runs it with Node.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { build } from "esbuild";

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL("../bench", import.meta.url))
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -3));
if (!name || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <${available.join("|")}> [args]\n`);
  process.exit(2);
}
const entry = new URL(`../bench/${name}.ts`, import.meta.url).pathname;
const outfile = new URL(`../.tmp/bench-${name}.mjs`, import.meta.url).pathname;
if (!existsSync(entry)) process.exit(2);
// Benchmarks use the built binary too (ingest worker threads run it); `bench all` builds it once for every bench.
if (process.env.IVOAI_BENCH_BUILT !== "1")
  spawnSync(process.execPath, [new URL("./build.mjs", import.meta.url).pathname], { stdio: "inherit" });
await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.19",
  packages: "external",
  define: { __IVOAI_VERSION__: JSON.stringify("bench") },
  logLevel: "warning",
});
const result = spawnSync(process.execPath, ["--expose-gc", outfile, ...args], { stdio: "inherit" });
process.exit(result.status ?? 1);
