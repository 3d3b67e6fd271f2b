// Hostile text through the built server: pages and documents crafted to make a backtracking regex or a
// recursive parser spin, sent while /health is polled; the gateway must keep answering, and refuse clearly.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rootAndDocs, writeTree } from "./context-helpers.js";
import { processCpuMs, statCpuMs } from "./cpu-time.js";
import {
  addDocsConnector,
  BIN,
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  startServer,
} from "./helpers.js";

/** How long one /health may take before the test gives up: generous for a busy host (a quadratic scan blocks
 * the event loop for minutes); the bound that matters is the server's CPU time. */
const HEALTH_WAIT_MS = 30_000;
/** The server's CPU for the hostile work: linear parsing takes well under a second; backtracking, minutes. */
const SERVER_CPU_BOUND_MS = 10_000;
const MiB = 1024 * 1024;
const run = promisify(execFile);

type Envelope = { status: string; data: Record<string, unknown> };

/**
 * Polls /health back to back (no timers) until stopped, and measures the server's CPU meanwhile; resolves with
 * the number of answers (each a 200) and that CPU time.
 */
function watchHealth(server: RunningServer): { stop(): Promise<{ answers: number; serverCpuMs: number }> } {
  const pid = server.child.pid ?? 0;
  const before = processCpuMs(pid);
  let answers = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      // A blocked event loop fails the test at the wait instead of hanging it.
      const response = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(HEALTH_WAIT_MS) });
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      answers += 1;
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const serverCpuMs = processCpuMs(pid) - before;
      console.info(`hostile input: ${answers} /health answers, server CPU ${serverCpuMs.toFixed(0)} ms`);
      return { answers, serverCpuMs };
    },
  };
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; envelope: Envelope }> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
  return { isError: result.isError === true, envelope: result.structuredContent as Envelope };
}

const credential = (server: RunningServer, root: string): Promise<string> =>
  enrolledCredential(server.url, root);

const mcpClient = (url: string, token: string): Promise<Client> =>
  connectMcp(url, token, { "x-ivoai-session-id": "sess-hostile", "x-ivoai-project": "git:acme/api" });

describe("hostile input", () => {
  let root: string;
  let docs: string;
  let server: RunningServer;
  let token: string;
  let memory: Client;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    ({ root, docs } = await rootAndDocs({ "readme.md": "# Readme\n\nNothing hostile here." }, cleanups));
    await initRoot(root);
    await addDocsConnector(root, docs);
    server = await startServer(root);
    token = await credential(server, root);
    memory = await mcpClient(`${server.url}/v1/memory/mcp`, token);
  });
  afterAll(async () => {
    await memory?.close();
    // SIGKILL: a server stuck in a backtracking regex would not get to its SIGTERM handler.
    await server?.stop("SIGKILL");
    for (const cleanup of cleanups) await cleanup();
  });

  it("keeps /health answering while an agent writes pages built to make the page parser backtrack", async () => {
    const health = watchHealth(server);
    const write = (name: string, body: string) =>
      call(memory, "memory_write_page", { path: `hostile/${name}`, body });
    const links = await write("links", "[[a|".repeat(MiB / 4 - 256));
    const heading = await write("heading", `# a${" ".repeat(MiB - 1024)}b`);
    const frontMatter = await write("front-matter", `---\ntitle: a${" ".repeat(MiB - 1024)}b\n---\nbody`);
    const { answers, serverCpuMs } = await health.stop();

    expect(links.envelope, JSON.stringify(links.envelope.data)).toMatchObject({
      status: "PENDING_HUMAN_APPROVAL",
    });
    expect(heading.envelope.status).toBe("PENDING_HUMAN_APPROVAL");
    // Oversized front matter is the agent's mistake: a tool error that says why, not a 500.
    expect(frontMatter.isError).toBe(true);
    expect(frontMatter.envelope.data.error).toMatch(/invalid front matter: it is larger than 8192 bytes/);
    expect(answers).toBeGreaterThan(0);
    expect(serverCpuMs).toBeLessThan(SERVER_CPU_BOUND_MS);
  });

  it("reads YAML front matter of a page and refuses invalid YAML as a tool error", async () => {
    const valid = await call(memory, "memory_write_page", {
      path: "yaml/ok",
      body: "---\ntitle: Block tags\ntags:\n  - ops\n  - billing\n---\nbody",
    });
    expect(valid.envelope.status).toBe("PENDING_HUMAN_APPROVAL");
    expect(valid.envelope.data.summary).toContain('titled "Block tags"');
    const invalid = await call(memory, "memory_write_page", {
      path: "yaml/bad",
      body: "---\ntags: [ops\n---\nbody",
    });
    expect(invalid.isError).toBe(true);
    expect(invalid.envelope.data.error).toMatch(/^invalid front matter: .*front matter line/);
  });

  it("answers 400 with a problem body to deeply nested JSON, and still accepts ordinary nesting", async () => {
    const post = (route: string, body: string, auth = true) =>
      fetch(`${server.url}${route}`, {
        method: "POST",
        headers: {
          ...(auth ? { authorization: `Bearer ${token}` } : {}),
          "content-type": "application/json",
        },
        body,
      });
    const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const event = (data: string) =>
      `{"session_id":"sess-deep","project":"git:acme/api","event":"tool_used","data":{"x":${data}}}`;

    const deep = await post("/v1/memory", event(nested(10_000)));
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({
      error: "invalid_json",
      message: "the request body nests arrays and objects deeper than 64 levels",
    });
    // Every route reading JSON through the shared helper gets the same answer.
    const enrollment = await post("/v1/enroll", `{"code":${nested(10_000)}}`, false);
    expect(enrollment.status).toBe(400);
    expect(((await enrollment.json()) as { error: string }).error).toBe("invalid_json");
    // Brackets inside strings are text, not nesting.
    expect((await post("/v1/memory", event(`"${"[".repeat(1_000)}"`))).status).toBe(202);
    expect((await post("/v1/memory", event(nested(60)))).status).toBe(202);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  /** `ivoai server ingest docs` under a shell that reads, once it has waited for it, the CPU time it used. */
  const ingestWithCpu = async () => {
    const stat = path.join(root, "ingest.stat");
    const script = `"$0" "$@"; code=$?; cat /proc/$$/stat > '${stat}'; exit $code`;
    const result = await run(
      "sh",
      ["-c", script, process.execPath, BIN, "server", "ingest", "docs", "--root", root],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    ).then(
      (done) => ({ code: 0, stderr: done.stderr }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? "" }),
    );
    return { ...result, cpuMs: statCpuMs(await readFile(stat, "utf8")).children };
  };

  it("keeps /health answering while an ingest reads documents built to make the title parser backtrack", async () => {
    await writeTree(docs, {
      "hostile/front-matter.md": `---\ntitle: a${" ".repeat(MiB)}b\n---\n# Fallback heading\n\nquokka`,
      "hostile/heading.md": `# a${" ".repeat(MiB)}b\n\nquokka`,
      "hostile/deep.md": `---\ntitle: ${"[".repeat(4_000)}\n---\n# Deep fallback\n\nquokka`,
      "yaml.md": "---\ntitle: 'Quokka: a YAML title'\ntags:\n  - animals\n---\n# Not the title\n\nquokka",
    });
    const health = watchHealth(server);
    const ingest = await ingestWithCpu();
    const { answers, serverCpuMs } = await health.stop();
    expect(ingest.code, ingest.stderr).toBe(0);
    console.info(`hostile input: the ingest used ${ingest.cpuMs.toFixed(0)} ms CPU`);
    expect(ingest.cpuMs).toBeLessThan(SERVER_CPU_BOUND_MS);
    expect(answers).toBeGreaterThan(0);
    expect(serverCpuMs).toBeLessThan(SERVER_CPU_BOUND_MS);

    const context = await mcpClient(`${server.url}/v1/mcp/context`, token);
    try {
      const recent = (await call(context, "context_recent", { limit: 10 })).envelope;
      const titles = Object.fromEntries(
        (recent.data.documents as { path: string; title: string }[]).map((doc) => [doc.path, doc.title]),
      );
      expect(titles).toMatchObject({
        "hostile/front-matter.md": "Fallback heading",
        "hostile/deep.md": "Deep fallback",
        "yaml.md": "Quokka: a YAML title",
      });
      // The heading line is read within the first 4 KiB, where it is "a" and spaces.
      expect(titles["hostile/heading.md"]).toBe("a");
    } finally {
      await context.close();
    }
  });
});
