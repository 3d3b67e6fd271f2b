// Benchmarks run the product's real paths: a server tree under a temp root, connectors, ingest.
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { loadServerConfig, type ServerConfig } from "../../src/config/server-config.js";
import { serverPaths } from "../../src/config/server-paths.js";
import { type ContextService, openContextService } from "../../src/server/context/service.js";
import { initServer } from "../../src/server/init.js";
import { silentLogger } from "../../src/shared/logger.js";

export interface BenchTree {
  root: string;
  open(): Promise<ContextService>;
  cleanup(): Promise<void>;
}

/** `edit` changes the loaded server.toml settings before the service opens (e.g. another embedder). */
export async function createBenchTree(
  prefix: string,
  edit: (config: ServerConfig) => ServerConfig = (config) => config,
): Promise<BenchTree> {
  const root = await mkdtemp(path.join(tmpdir(), `ivoai-bench-${prefix}-`));
  await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
  const paths = serverPaths(root);
  return {
    root,
    async open() {
      return openContextService({
        paths,
        config: edit(await loadServerConfig(paths.configFile)),
        logger: silentLogger,
        // Ingest workers run the built binary, as `ivoai server ingest` does.
        workerEntry: path.resolve("dist/ivoai.mjs"),
      });
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The machine's CPU time counters (clock ticks): all of it, and what the hypervisor stole (Linux only). */
function cpuCounters(): { total: number; steal: number } | undefined {
  try {
    const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already counted in user).
    const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    return { total, steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

const countersAtStart = cpuCounters();

/**
 * What a figure was measured on: Node, platform, CPUs, the load average now and the share of CPU time the
 * hypervisor stole since the bench began, so that a reader can tell a busy or noisy host from a slow build.
 */
export function machineLine(): string {
  const now = cpuCounters();
  const stolen =
    now && countersAtStart && now.total > countersAtStart.total
      ? `${((100 * (now.steal - countersAtStart.steal)) / (now.total - countersAtStart.total)).toFixed(1)} % of CPU time stolen since the bench began`
      : "stolen CPU unknown";
  const [one, five, fifteen] = loadavg().map((value) => value.toFixed(2));
  return `node ${process.version}, ${process.platform}/${process.arch}, ${availableParallelism()} CPUs, load average ${one} / ${five} / ${fifteen} (1 / 5 / 15 min), ${stolen}`;
}

/** `ivoai server init` of a loopback tree at `root` (any free port), as the benches that run the binary do it. */
export function serverInitArgs(root: string): string[] {
  return ["server", "init", "--root", root, "--public-url", "http://127.0.0.1:0", "--listen", "127.0.0.1:0"];
}
