// Benchmarks run the product's real paths: a server tree under a temp root, connectors, ingest.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
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

export function machineLine(): string {
  return `node ${process.version}, ${process.platform}/${process.arch}`;
}

/** `ivoai server init` of a loopback tree at `root` (any free port), as the benches that run the binary do it. */
export function serverInitArgs(root: string): string[] {
  return ["server", "init", "--root", root, "--public-url", "http://127.0.0.1:0", "--listen", "127.0.0.1:0"];
}
