// A real `ivoai router serve` stops on SIGTERM whatever its upstreams do: here one accepts every MCP request
// and never answers, while an agent's call waits on it (issue 27: one router outlived SIGTERM by 29 minutes).
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeServer, startFakeIvoai } from "./fixtures/fake-ivoai.js";
import { BIN, runIvoai, tempDir } from "./helpers.js";

interface Ready {
  endpoints: { context: string };
  capability: string;
}

/** Polls `done` every 50 ms until it holds, or fails after `ms` with what `seen` describes. */
async function waitFor(what: string, done: () => boolean, seen: () => string, ms = 60_000): Promise<void> {
  const start = performance.now();
  while (!done()) {
    if (performance.now() - start > ms) throw new Error(`gave up waiting for ${what}; saw: ${seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("router serve shutdown", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const fakes: FakeServer[] = [];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    const made = await tempDir("ivoai-shutdown-");
    cleanups.push(made.cleanup);
    env = {
      HOME: made.dir,
      XDG_CONFIG_HOME: path.join(made.dir, "config"),
      XDG_STATE_HOME: path.join(made.dir, "state"),
      XDG_DATA_HOME: path.join(made.dir, "data"),
    };
    // Two purposes, so the router's own MCP server fans out and opens an upstream session to each.
    for (const [alias, mode] of [
      ["docs", "healthy"],
      ["stalled", "hang"],
    ] as const) {
      const fake = await startFakeIvoai(mode);
      fakes.push(fake);
      const added = await runIvoai(
        ["connect", "server", "add", alias, "--url", fake.url, "--purpose", alias, "--code-stdin"],
        { env, input: "code\n" },
      );
      // The stalled server's MCP probe times out: a warning, and the connection is still added.
      expect(added.code, added.stderr).toBe(0);
    }
  });
  afterAll(async () => {
    for (const fake of fakes) await fake.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it("exits after SIGTERM while a call waits on an upstream that never answers", async () => {
    // The read deadline is the longest allowed, so nothing but the shutdown itself can end the wait.
    const child: ChildProcess = spawn(
      process.execPath,
      [BIN, "router", "serve", "--json", "--deadline-ms", "600000"],
      { env: { ...process.env, ...env } },
    );
    let stderr = "";
    child.stderr?.on("data", (chunk) => (stderr += chunk));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on("exit", (code, signal) => resolve({ code, signal })),
    );
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    void exit.then((value) => {
      exited = value;
    });
    const agent = new Client({ name: "agent", version: "1" });
    try {
      const ready = await new Promise<Ready>((resolve, reject) => {
        createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) =>
          resolve(JSON.parse(line) as Ready),
        );
        void exit.then(() => reject(new Error(`router exited before it was ready: ${stderr}`)));
      });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(ready.endpoints.context), {
          requestInit: { headers: { authorization: `Bearer ${ready.capability}` } },
        }),
      );
      const stalled = fakes[1] as FakeServer;
      // `connect server add` probed it already: only requests after these are the router's.
      const before = stalled.held;
      const pending = agent
        .callTool({ name: "context_search", arguments: { query: "deploy" } }, undefined, { timeout: 900_000 })
        .then(
          () => "answered",
          (error: unknown) => `failed: ${(error as Error).message}`,
        );
      await waitFor(
        "the router to reach the stalled upstream",
        () => stalled.held > before,
        () => `held=${stalled.held} exited=${JSON.stringify(exited)} stderr=${stderr}`,
      );

      child.kill("SIGTERM");
      await waitFor(
        "the router to exit after SIGTERM",
        () => exited !== undefined,
        () => `still running (pid ${child.pid}), upstream requests held=${stalled.held}, stderr=${stderr}`,
      );
      expect(exited).toEqual({ code: 0, signal: null });
      // The agent's call ends with the router instead of waiting on the upstream.
      expect(await pending).toMatch(/^failed: /);
    } finally {
      if (exited === undefined) child.kill("SIGKILL");
      await exit;
      await agent.close();
    }
  }, 300_000);
});
