// One AUTO test bench: a real ivoai server with a small corpus, a client enrolled as "acme", the fake codex and
// claude on PATH, and private XDG dirs. Each scenario gets a fresh script and log.
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { writeTree } from "./context-helpers.js";
import { type FakeClis, type FakeScript, installFakeClis } from "./fake-clis.js";
import {
  BIN,
  createCode,
  initWithDocs,
  OUTSIDE_REPO,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

export interface AutoBench {
  env: NodeJS.ProcessEnv;
  fakes: FakeClis;
  server: RunningServer;
  serverRoot: string;
  stateDir: string;
  /** `ivoai ARGS` with the bench's environment. */
  ivoai(args: string[], timeoutMs?: number): ReturnType<typeof runIvoai>;
  /** `ivoai session show ID --json`, parsed. */
  show<T = Record<string, unknown>>(id: string): Promise<T>;
  /** A fresh script and log; AUTO's caches (registry, quota, artifacts, journals) dropped. */
  scenario(script: FakeScript): Promise<void>;
  /** `ivoai ARGS` as a child process of its own (to kill it, or to run something beside it). */
  spawnIvoai(args: string[]): {
    child: ReturnType<typeof spawn>;
    stdout: () => string;
    exited: Promise<number | null>;
  };
  close(): Promise<void>;
}

/** A client's environment in its own home `dir`: the fakes first on PATH, private XDG dirs, quick kills. */
export function autoClientEnv(dir: string, fakes: FakeClis): NodeJS.ProcessEnv {
  return {
    ...fakes.env,
    PATH: `${fakes.binDir}:${process.env.PATH}`,
    XDG_CONFIG_HOME: path.join(dir, "config"),
    XDG_STATE_HOME: path.join(dir, "state"),
    XDG_DATA_HOME: path.join(dir, "data"),
    XDG_CACHE_HOME: path.join(dir, "cache"),
    HOME: dir,
    IVOAI_KILL_AFTER_MS: "500",
  };
}

export async function openAutoBench(): Promise<AutoBench> {
  const made = await tempDir();
  const docs = await tempDir("ivoai-docs-");
  const xdg = await tempDir("ivoai-client-");
  await writeTree(docs.dir, {
    "deploy.md": "# Deploy\n\nWe deploy with the wombat pipeline: build, canary, then the full fleet.",
  });
  await initWithDocs(made.dir, docs.dir);
  const server = await startServer(made.dir);
  const fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
  const env = autoClientEnv(xdg.dir, fakes);
  const stateDir = path.join(xdg.dir, "state", "ivoai");
  const { code } = await createCode(made.dir);
  const added = await runIvoai(
    ["connect", "server", "add", "acme", "--url", server.url, "--purpose", "acme", "--code-stdin"],
    { env, input: `${code}\n` },
  );
  expect(added.code).toBe(0);
  const ivoai = (args: string[], timeoutMs = 90_000) => runIvoai(args, { env, timeoutMs });
  return {
    env,
    fakes,
    server,
    serverRoot: made.dir,
    stateDir,
    ivoai,
    async show<T>(id: string) {
      const shown = await ivoai(["session", "show", id, "--json"]);
      expect(shown.code, shown.stderr).toBe(0);
      return JSON.parse(shown.stdout) as T;
    },
    async scenario(script) {
      await fakes.reset();
      await fakes.script(script);
      await rm(path.join(stateDir, "auto"), { recursive: true, force: true });
    },
    spawnIvoai(args) {
      const child = spawn(process.execPath, [BIN, ...args], {
        cwd: OUTSIDE_REPO,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
      });
      child.stderr?.resume();
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      return { child, stdout: () => out, exited };
    },
    async close() {
      await fakes.killAll();
      await server.stop();
      for (const dir of [made, docs, xdg]) await dir.cleanup();
    },
  };
}

/** A worker-sized research task of a scripted plan. */
export const planTask = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: "research",
  instructions: `Survey part ${id} of the wombat pipeline`,
  depends_on: [],
  signals: { complexity: 0.5, context_need: 0.5, risk: 0.3, ambiguity: 0.2, est_tokens: 30_000 },
  ...extra,
});
