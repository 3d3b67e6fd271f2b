// Both executors against the fake official CLIs, spawned for real: outcomes, argv by role, hard limits,
// and the process group ended and reaped on timeout, KILL escalation and cancellation.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type FakeClis, type FakeLogLine, installFakeClis } from "../../../../test/fake-clis.js";
import type { ExecutorEvent, ExecutorName, TurnRequest } from "../contracts.js";
import { createExecutor } from "./index.js";
import { procStat } from "./process.js";

const require = createRequire(import.meta.url);
const TOKEN_ENV = "IVOAI_ROUTER_TOKEN";
const TOKEN = "ivoai_test_capability_0123456789abcdef";

let dir: string;
let fakes: FakeClis;
let knowledge: { server: Server; url: string; calls: { tool: string; auth: string | undefined }[] };

/** A real MCP server (official SDK, streamable HTTP on 127.0.0.1:0) standing in for the session router. */
async function startKnowledgeServer() {
  const calls: { tool: string; auth: string | undefined }[] = [];
  const server = createServer(async (req, res) => {
    const mcp = new McpServer({ name: "knowledge", version: "0.0.0" });
    for (const tool of ["memory_query", "memory_write_page", "context_search"]) {
      mcp.registerTool(tool, { inputSchema: { q: z.string().optional() } }, async () => {
        calls.push({ tool, auth: req.headers.authorization });
        return { content: [{ type: "text", text: `${tool} ran` }] };
      });
    }
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    await mcp.connect(transport);
    res.on("close", () => void mcp.close());
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, calls };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-exec-"));
  fakes = await installFakeClis(dir);
  knowledge = await startKnowledgeServer();
});
afterAll(async () => {
  // Should a test fail, no fake it started may outlive it.
  for (const line of await fakes.log()) {
    for (const pid of [line.pid, line.grandchild_pid ?? 0]) {
      if (pid > 0 && !dead(pid)) process.kill(pid, "SIGKILL");
    }
  }
  await new Promise((resolve) => knowledge.server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

let turnCount = 0;
async function turn(
  name: ExecutorName,
  overrides: Partial<TurnRequest> = {},
): Promise<{
  outcome: Awaited<ReturnType<ReturnType<typeof createExecutor>["runTurn"]>>;
  events: ExecutorEvent[];
  logged: FakeLogLine | undefined;
}> {
  turnCount += 1;
  const runtimeDir = path.join(dir, `rt-${turnCount}`);
  await mkdir(runtimeDir, { recursive: true, mode: 0o700 });
  const before = (await fakes.log()).length;
  const events: ExecutorEvent[] = [];
  const outcome = await createExecutor(name, fakes.paths[name]).runTurn({
    role: "primary",
    prompt: "[ivoai:answer]\nWhat is ivoai?",
    cwd: dir,
    runtimeDir,
    env: { ...process.env, ...fakes.env, [TOKEN_ENV]: TOKEN },
    model: null,
    effort: null,
    resumeThreadId: null,
    knowledge: null,
    extraMcp: [],
    outputSchema: null,
    timeoutMs: 20_000,
    killAfterMs: 500,
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  const logged = (await fakes.log()).slice(before).find((line) => line.executor === name);
  return { outcome, events, logged };
}

/** True when no live process is left with this pid (gone, or a zombie nobody reaps). */
const dead = (pid: number) => {
  const stat = procStat(pid);
  return stat === null || stat.state === "Z" || stat.state === "X";
};

const knowledgeAccess = () => ({
  endpoints: { memory: `${knowledge.url}/mcp/memory`, context: `${knowledge.url}/mcp/context` },
  tokenEnv: TOKEN_ENV,
});

describe.each(["codex", "claude"] as const)("%s executor", (name) => {
  it("completes a turn with its thread id, final text, usage and timing", async () => {
    await fakes.script({
      [name]: { turns: { answer: [{ reply: "ivoai is a knowledge gateway", events_before: 3 }] } },
    });
    const { outcome, events } = await turn(name);
    expect(outcome.status).toBe("completed");
    expect(outcome.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(outcome.text).toBe("ivoai is a knowledge gateway");
    expect(outcome.exitCode).toBe(0);
    expect(outcome.usage?.inputTokens).toBeGreaterThan(0);
    expect(outcome.firstEventMs).not.toBeNull();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(outcome.firstEventMs ?? 0);
    // The process event comes first (the supervisor records whom to reap), then the CLI's own events.
    expect(events[0]).toMatchObject({ type: "process", pid: expect.any(Number) });
    expect(events[1]).toEqual({ type: "thread", threadId: outcome.threadId });
    expect(events.some((event) => event.type === "tool" && event.status === "completed")).toBe(true);
  });

  it("returns structured output when a schema is asked for, passing the schema to the CLI", async () => {
    const plan = { tasks: [{ id: "t1", kind: "research" }] };
    await fakes.script({ [name]: { turns: { plan: [{ reply: plan }] } } });
    const schema = { type: "object", properties: { tasks: { type: "array" } }, required: ["tasks"] };
    const { outcome, logged } = await turn(name, { prompt: "[ivoai:plan]\nplan it", outputSchema: schema });
    expect(outcome.status).toBe("completed");
    expect(outcome.structured).toEqual(plan);
    const argv = logged?.argv ?? [];
    if (name === "codex") {
      const file = argv[argv.indexOf("--output-schema") + 1] ?? "";
      expect(JSON.parse(await readFile(file, "utf8"))).toEqual(schema);
    } else {
      expect(JSON.parse(argv[argv.indexOf("--json-schema") + 1] ?? "")).toEqual(schema);
    }
  });

  it("resumes the given thread", async () => {
    await fakes.script({});
    const id = "0199a213-81c0-7800-8aa1-bbab2a035a53";
    const { outcome, logged } = await turn(name, { resumeThreadId: id, model: "m-1", effort: "high" });
    expect(outcome.status).toBe("completed");
    expect(outcome.threadId).toBe(id);
    expect(logged?.resume).toBe(id);
    if (name === "codex") expect(logged?.argv.slice(0, 3)).toEqual(["--no-daemon", "exec", "resume"]);
    else expect(logged?.argv).toContain("--resume");
  });

  it("reports a usage limit mid-turn as a limit with its reset time", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 7200;
    await fakes.script({
      [name]: { turns: { answer: [{ limit: "usage", resets_at: resetsAt, events_before: 1 }] } },
    });
    const { outcome, events } = await turn(name);
    expect(outcome.status).toBe("limit");
    expect(outcome.limit).toMatchObject({
      kind: "usage_limit",
      resetsAt: new Date(resetsAt * 1000).toISOString(),
    });
    expect(events.some((event) => event.type === "limit")).toBe(true);
    if (name === "claude") {
      const quota = events.filter((event) => event.type === "quota").flatMap((event) => event.snapshots);
      expect(quota.map((snapshot) => snapshot.status)).toEqual(["allowed", "rejected"]);
      expect(quota[1]).toMatchObject({ executor: "claude", window: "five_hour", source: "stream" });
    }
  });

  it("ends the whole process group as soon as a hard limit shows, without waiting for the CLI", async () => {
    await fakes.script({ [name]: { turns: { answer: [{ limit: "usage", hang: true, grandchild: true }] } } });
    // A turn timeout longer than the test's: only the limit can end the hanging CLI before the test gives up.
    const { outcome, logged } = await turn(name, { timeoutMs: 600_000 });
    expect(outcome.status).toBe("limit");
    expect(outcome.exitSignal).toBe("SIGTERM");
    expect(dead(logged?.grandchild_pid ?? 0)).toBe(true);
  });

  it("tells a context-window stop and a rate limit apart from a usage limit", async () => {
    await fakes.script({ [name]: { turns: { answer: [{ limit: "context" }, { limit: "rate" }] } } });
    expect((await turn(name)).outcome.limit?.kind).toBe("context_window");
    expect((await turn(name)).outcome.limit?.kind).toBe("rate_limit");
  });

  it("reports a CLI without a login as an unauthorized limit", async () => {
    await fakes.script({ [name]: { logged_in: false } });
    const { outcome } = await turn(name);
    expect(outcome.status).toBe("limit");
    expect(outcome.limit?.kind).toBe("unauthorized");
  });

  it("reports a CLI that dies without a result as crashed", async () => {
    await fakes.script({ [name]: { turns: { answer: [{ crash: true }] } } });
    const { outcome } = await turn(name);
    expect(outcome.status).toBe("crashed");
    expect(outcome.exitCode).toBe(3);
    expect(outcome.error).toContain("exited with code 3");
  });

  it("times out a hung turn and ends its whole process group", async () => {
    await fakes.script({ [name]: { turns: { answer: [{ hang: true, grandchild: true }] } } });
    const { outcome, logged } = await turn(name, { timeoutMs: 1_500 });
    expect(outcome.status).toBe("timeout");
    expect(outcome.exitSignal).toBe("SIGTERM");
    expect(logged?.grandchild_pid).toBeGreaterThan(0);
    expect(dead(logged?.pid ?? 0)).toBe(true);
    expect(dead(logged?.grandchild_pid ?? 0)).toBe(true);
  });

  it("kills a group that ignores TERM after killAfterMs, grandchild included", async () => {
    await fakes.script({
      [name]: { turns: { answer: [{ hang: true, ignore_term: true, grandchild: true }] } },
    });
    const controller = new AbortController();
    let abortedAt = 0;
    const { outcome, logged } = await turn(name, {
      killAfterMs: 400,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === "thread" && abortedAt === 0) {
          abortedAt = performance.now();
          controller.abort();
        }
      },
    });
    const waited = performance.now() - abortedAt;
    expect(outcome.status).toBe("cancelled");
    expect(outcome.exitSignal).toBe("SIGKILL");
    expect(waited).toBeGreaterThanOrEqual(400);
    expect(dead(logged?.pid ?? 0)).toBe(true);
    expect(dead(logged?.grandchild_pid ?? 0)).toBe(true);
  });

  it("cancels a turn through its AbortSignal", async () => {
    await fakes.script({ [name]: { turns: { answer: [{ hang: true }] } } });
    const controller = new AbortController();
    const { outcome } = await turn(name, {
      signal: controller.signal,
      onEvent: (event) => event.type === "thread" && controller.abort(),
    });
    expect(outcome.status).toBe("cancelled");
    expect(outcome.threadId).not.toBeNull();
  });

  it("runs a worker read-only: the CLI refuses a knowledge write and allows a read", async () => {
    knowledge.calls.length = 0;
    await fakes.script({
      [name]: {
        worker_by_task: {
          w1: [
            {
              mcp_calls: [
                { server: "ivoai-memory", tool: "memory_write_page", args: { q: "x" } },
                { server: "ivoai-memory", tool: "memory_query", args: { q: "x" } },
              ],
            },
          ],
        },
      },
    });
    const { outcome, events, logged } = await turn(name, {
      role: "worker",
      prompt: "[ivoai:worker] task=w1\nlook",
      knowledge: knowledgeAccess(),
      extraMcp: [{ name: "ivoai-orchestrator", command: process.execPath, args: ["x.mjs"], envVars: [] }],
    });
    expect(outcome.status).toBe("completed");
    expect(events.filter((event) => event.type === "tool" && event.status !== "started")).toEqual([
      { type: "tool", name: "ivoai-memory/memory_write_page", status: "failed" },
      { type: "tool", name: "ivoai-memory/memory_query", status: "completed" },
    ]);
    const argv = logged?.argv ?? [];
    if (name === "codex") {
      expect(argv.slice(argv.indexOf("-s"), argv.indexOf("-s") + 2)).toEqual(["-s", "read-only"]);
      expect(argv).toContain("--ignore-user-config");
    } else {
      expect(argv.slice(argv.indexOf("--permission-mode"), argv.indexOf("--permission-mode") + 2)).toEqual([
        "--permission-mode",
        "plan",
      ]);
      expect(argv).toContain("--strict-mcp-config");
      expect(argv[argv.indexOf("--disallowedTools") + 1]?.split(",")).toEqual(
        expect.arrayContaining(["Edit", "Write", "Bash", "mcp__ivoai-memory__memory_write_page"]),
      );
    }
    expect(argv.join(" ")).not.toContain("ivoai-orchestrator");
    expect(argv.join(" ")).not.toContain(TOKEN);
    expect(logged?.mcp_results.map((result) => [result.tool, result.ok])).toEqual([
      ["memory_write_page", false],
      ["memory_query", true],
    ]);
    expect(knowledge.calls).toEqual([{ tool: "memory_query", auth: `Bearer ${TOKEN}` }]);
  });

  it("gives the primary the knowledge tools and its stdio MCP servers, environment passed by name", async () => {
    const sdk = (file: string) => pathToFileURL(require.resolve(`@modelcontextprotocol/sdk/${file}`)).href;
    const server = path.join(dir, "orchestrator.mjs");
    await writeFile(
      server,
      [
        `import { McpServer } from ${JSON.stringify(sdk("server/mcp.js"))};`,
        `import { StdioServerTransport } from ${JSON.stringify(sdk("server/stdio.js"))};`,
        'const mcp = new McpServer({ name: "orchestrator", version: "0.0.0" });',
        'mcp.registerTool("task_status", {}, async () => ({ content: [{ type: "text", text: "token=" + process.env.IVOAI_ORCH_TOKEN }] }));',
        "await mcp.connect(new StdioServerTransport());",
      ].join("\n"),
    );
    {
      knowledge.calls.length = 0;
      await fakes.script({
        [name]: {
          turns: {
            answer: [
              {
                mcp_calls: [
                  { server: "ivoai-memory", tool: "memory_write_page", args: {} },
                  { server: "ivoai-orchestrator", tool: "task_status", args: {} },
                ],
              },
            ],
          },
        },
      });
      const { outcome, logged } = await turn(name, {
        knowledge: knowledgeAccess(),
        env: { ...process.env, ...fakes.env, [TOKEN_ENV]: TOKEN, IVOAI_ORCH_TOKEN: "orch-secret" },
        extraMcp: [
          {
            name: "ivoai-orchestrator",
            command: process.execPath,
            args: [server],
            envVars: ["IVOAI_ORCH_TOKEN"],
          },
        ],
      });
      expect(outcome.status).toBe("completed");
      expect(logged?.mcp_results.map((result) => [result.tool, result.ok, result.text])).toEqual([
        ["memory_write_page", true, "memory_write_page ran"],
        ["task_status", true, "token=orch-secret"],
      ]);
      expect(logged?.argv.join(" ")).not.toContain("orch-secret");
    }
  });

  it("reports a CLI that cannot be started as crashed, without throwing", async () => {
    const outcome = await createExecutor(name, path.join(dir, "missing-cli")).runTurn({
      role: "primary",
      prompt: "[ivoai:answer]\nhi",
      cwd: dir,
      runtimeDir: dir,
      env: process.env,
      model: null,
      effort: null,
      resumeThreadId: null,
      knowledge: null,
      extraMcp: [],
      outputSchema: null,
      timeoutMs: 5_000,
      killAfterMs: 200,
    });
    expect(outcome.status).toBe("crashed");
    expect(outcome.error).toContain("ENOENT");
  });
});

describe("claude stream quirks", () => {
  it("recovers a rate_limit_event written into the middle of another line", async () => {
    await fakes.script({ claude: { turns: { answer: [{ interleave: true, reply: "ok" }] } } });
    const { outcome, events } = await turn("claude");
    expect(outcome.status).toBe("completed");
    expect(outcome.threadId).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.map((event) => event.type).filter((type) => type !== "text")).toEqual(
      expect.arrayContaining(["thread", "quota", "usage"]),
    );
  });
});
