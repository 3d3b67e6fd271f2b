// Seed 001's `--knowledge-source mindsite`: a purpose or redundancy group selects its members, a down primary
// does not fail the start (reads fail over within the group), and an ambiguous name is refused with its matches.
import { spawn } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeServer, startFakeIvoai } from "./fixtures/fake-ivoai.js";
import { BIN, runIvoai, tempDir } from "./helpers.js";

const FAKE_AGENT = path.resolve("test/fixtures/fake-agent.mjs");

interface Ready {
  endpoints: { context: string };
  capability: string;
  sources: { alias: string }[];
}

describe("--knowledge-source by purpose or redundancy group", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const fakes: Record<string, FakeServer> = {};
  let env: NodeJS.ProcessEnv;
  let recordFile: string;
  const ivoai = (args: string[], extra: NodeJS.ProcessEnv = {}, input?: string) =>
    runIvoai(args, { env: { ...env, ...extra }, ...(input !== undefined ? { input } : {}) });

  /** `ivoai router serve` until its ready line (then stopped), or its failure. */
  const serve = (selection: string) =>
    new Promise<{ ready?: Ready; code?: number | null; stderr: string; stop(): Promise<void> }>((resolve) => {
      const child = spawn(process.execPath, [BIN, "router", "serve", "--knowledge-source", selection], {
        env: { ...process.env, ...env },
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
      const stop = async () => {
        child.kill("SIGTERM");
        await exited;
      };
      createInterface({ input: child.stdout }).once("line", (line) =>
        resolve({ ready: JSON.parse(line) as Ready, stderr, stop }),
      );
      void exited.then((code) => resolve({ code, stderr, stop }));
    });

  beforeAll(async () => {
    const made = await tempDir("ivoai-selection-");
    cleanups.push(made.cleanup);
    const bin = path.join(made.dir, "bin");
    await mkdir(bin);
    for (const name of ["codex", "claude"]) {
      await writeFile(
        path.join(bin, name),
        `#!/bin/sh\nFAKE_AGENT_NAME=${name} exec "${process.execPath}" "${FAKE_AGENT}" "$@"\n`,
      );
      await chmod(path.join(bin, name), 0o755);
    }
    recordFile = path.join(made.dir, "record.json");
    env = {
      HOME: made.dir,
      XDG_CONFIG_HOME: path.join(made.dir, "config"),
      XDG_STATE_HOME: path.join(made.dir, "state"),
      XDG_DATA_HOME: path.join(made.dir, "data"),
      PATH: `${bin}:${process.env.PATH}`,
      FAKE_AGENT_RECORD: recordFile,
    };
    const connections: [string, string[]][] = [
      ["mindsite-1", ["--purpose", "mindsite", "--redundancy-group", "mindsite", "--priority", "10"]],
      ["mindsite-2", ["--purpose", "mindsite", "--redundancy-group", "mindsite", "--priority", "20"]],
      // "docs" is one server's alias and another's purpose.
      ["docs", ["--purpose", "wiki"]],
      ["notes", ["--purpose", "docs"]],
    ];
    for (const [alias, flags] of connections) {
      const fake = await startFakeIvoai("healthy");
      fakes[alias] = fake;
      const added = await ivoai(
        ["connect", "server", "add", alias, "--url", fake.url, ...flags, "--code-stdin"],
        {},
        "code\n",
      );
      expect(added.stderr).toBe("");
      expect(added.code).toBe(0);
    }
    // The primary goes away: its port now refuses connections.
    await fakes["mindsite-1"]?.close();
  });
  afterAll(async () => {
    for (const [alias, fake] of Object.entries(fakes)) if (alias !== "mindsite-1") await fake.close();
    for (const cleanup of cleanups) await cleanup();
  });

  it("serves a group whose primary is down, by group name or by its members, failing reads over", async () => {
    for (const selection of ["mindsite", "mindsite-1,mindsite-2"]) {
      const router = await serve(selection);
      try {
        expect(router.stderr).toBe("");
        expect(router.ready?.sources.map((source) => source.alias).sort()).toEqual([
          "mindsite-1",
          "mindsite-2",
        ]);
        const ready = router.ready as Ready;
        const mcp = new Client({ name: "agent", version: "1" });
        await mcp.connect(
          new StreamableHTTPClientTransport(new URL(ready.endpoints.context), {
            requestInit: { headers: { authorization: `Bearer ${ready.capability}` } },
          }),
        );
        const result = (await mcp.callTool({
          name: "context_search",
          arguments: { query: "deploy" },
        })) as CallToolResult;
        await mcp.close();
        // One logical source: the standby's own answer, not a federation envelope, saying who answered.
        expect(result.structuredContent).toEqual({
          status: "SUCCESS",
          data: { results: [{ path: "deploy.md", origin: fakes["mindsite-2"]?.url }] },
        });
        expect(result._meta?.["ivoai/source"]).toMatchObject({
          alias: "mindsite-2",
          redundancy_group: "mindsite",
          failed_over_from: ["mindsite-1"],
        });
      } finally {
        await router.stop();
      }
    }
  });

  it("starts codex and a session with seed 001's example while the primary is down", async () => {
    const codex = await ivoai(["codex", "--knowledge-source", "mindsite", "--", "exec", "hi"], {
      FAKE_AGENT_QUERY: "deploy",
    });
    expect(codex.stderr).toBe("");
    expect(codex.code).toBe(0);
    const seen = JSON.parse(await readFile(recordFile, "utf8")) as { search: string };
    expect(seen.search).toContain(`answer from ${fakes["mindsite-2"]?.url}`);

    const session = await ivoai(
      ["session", "start", "--executor", "claude", "--knowledge-source", "mindsite"],
      { FAKE_AGENT_EXIT: "3" },
    );
    expect(session.stderr).toBe("");
    expect(session.code).toBe(3);
    const sessions = (
      JSON.parse((await ivoai(["session", "list", "--json"])).stdout) as {
        sessions: {
          agent: string;
          knowledge_sources: string[];
        }[];
      }
    ).sessions;
    expect(sessions.map((entry) => [entry.agent, [...entry.knowledge_sources].sort()])).toEqual([
      ["claude", ["mindsite-1", "mindsite-2"]],
      ["codex", ["mindsite-1", "mindsite-2"]],
    ]);
  });

  it("refuses an ambiguous name with one line listing its matches", async () => {
    const router = await serve("docs");
    expect(router.ready).toBeUndefined();
    expect(router.code).toBe(2);
    expect(router.stderr).toBe(
      "ivoai: knowledge source docs is ambiguous: it is the alias of docs; purpose of notes; " +
        "name the servers by alias instead\n",
    );
    const codex = await ivoai(["codex", "--knowledge-source", "docs"]);
    expect(codex.code).toBe(2);
    expect(codex.stderr).toMatch(/ambiguous: it is the alias of docs; purpose of notes/);
  });
});
