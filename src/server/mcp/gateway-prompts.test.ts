import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import { ENDPOINTS } from "../../protocol/discovery.js";
import { PROMPT_NAMES } from "../../protocol/prompts.js";
import type { Scope } from "../../protocol/scopes.js";
import { silentLogger } from "../../shared/logger.js";
import { createGatewayApp } from "../app.js";
import { type ContextService, openContextService } from "../context/service.js";
import { createEnrollmentService, type EnrollmentService } from "../enrollment/service.js";
import { type EnrollmentStore, openEnrollmentStore } from "../enrollment/store.js";
import { preparePageWrite } from "../memory/page-write.js";
import { type MemoryService, openMemoryService } from "../memory/service.js";
import { openSqliteSql } from "../store/sqlite.js";
import { connectClient, mcpFailure, serveHttp } from "./mcp.test-kit.js";

// The gateway's prompts and logging through its real endpoints (/v1/mcp/context, /v1/memory/mcp), over HTTP,
// with the official SDK client, real SQLite stores and real enrolled credentials.
let dir: string;
let enrollmentStore: EnrollmentStore;
let enrollment: EnrollmentService;
let memory: MemoryService;
let context: ContextService;
let http: Awaited<ReturnType<typeof serveHttp>> | undefined;
let base: string;
const open: Client[] = [];

const PROJECT_SCOPES = ["billing", "bi-tools", "payments"];
const MANY = Array.from({ length: 130 }, (_, index) => `s${String(index).padStart(3, "0")}`);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "ivoai-prompts-"));
  const paths = serverPaths(dir);
  const config = serverConfigSchema.parse({ server: { public_url: "http://127.0.0.1" } });
  enrollmentStore = await openEnrollmentStore({ db: openSqliteSql(path.join(dir, "enrollment.sqlite")) });
  enrollment = createEnrollmentService({ store: enrollmentStore });
  await mkdir(paths.contextDir, { recursive: true });
  await mkdir(paths.memoryDir, { recursive: true });
  memory = await openMemoryService({ paths, config, logger: silentLogger });
  context = openContextService({ paths, config, logger: silentLogger });
  for (const name of ["handbook", "hr-wiki", "engineering"]) {
    const folder = path.join(dir, "sources", name);
    await mkdir(folder, { recursive: true });
    await context.addConnector({ name, type: "filesystem", path: folder });
  }
  await memory.store.writePages(
    [...PROJECT_SCOPES, ...MANY].map((scope) =>
      preparePageWrite({
        scope,
        path: "notes/start",
        body: `# Start\n\nNotes of ${scope}.`,
        author: "cli_a",
      }),
    ),
    new Date().toISOString(),
  );
  const app = createGatewayApp({
    config,
    paths,
    enrollment,
    logger: silentLogger,
    listenerMode: "loopback",
    listenHost: "127.0.0.1",
    publicUrl: () => base,
    readiness: [],
    context,
    memory,
  });
  http = await serveHttp(app.fetch);
  base = http.base;
});

afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await http?.close();
  await context?.close();
  await memory?.close();
  await enrollmentStore?.close();
  await rm(dir, { recursive: true, force: true });
});

async function credential(scopes: Scope[]): Promise<string> {
  const { code } = await enrollment.createCode({ ttlMs: 60_000, scopes });
  const exchanged = await enrollment.exchange(code, "test");
  if (!exchanged.ok) throw new Error(exchanged.reason);
  return exchanged.credential;
}

async function connect(
  endpoint: string,
  bearer: string,
  headers: Record<string, string> = {},
): Promise<{ client: Client; messages: LoggingMessageNotification["params"][] }> {
  const client = await connectClient(`${base}${endpoint}`, { authorization: `Bearer ${bearer}`, ...headers });
  const messages: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification.params);
  });
  open.push(client);
  return { client, messages };
}

const promptShapes = async (client: Client) =>
  (await client.listPrompts()).prompts.map((prompt) => ({
    name: prompt.name,
    args: (prompt.arguments ?? []).map((arg) => `${arg.name}${arg.required ? "" : "?"}`),
  }));

const refusal = mcpFailure;

describe("gateway MCP prompts", () => {
  it("offers each credential the prompts its tools can follow, with their arguments", async () => {
    const contextOnly = await credential(["context:read"]);
    const reader = await credential(["memory:read"]);
    const writer = await credential(["memory:read", "memory:write"]);
    const onContext = await connect(ENDPOINTS.contextMcp, contextOnly);
    expect(onContext.client.getServerCapabilities()).toMatchObject({
      prompts: { listChanged: false },
      completions: {},
      logging: {},
    });
    expect(await promptShapes(onContext.client)).toEqual([
      { name: PROMPT_NAMES.policy, args: [] },
      // No project argument: this credential cannot query memory, and its completion would list memory scopes.
      { name: PROMPT_NAMES.answer, args: ["question"] },
      { name: PROMPT_NAMES.find, args: ["source", "query"] },
    ]);
    expect(await promptShapes((await connect(ENDPOINTS.memoryMcp, reader)).client)).toEqual([
      { name: PROMPT_NAMES.policy, args: [] },
      { name: PROMPT_NAMES.answer, args: ["question", "project?"] },
    ]);
    expect(await promptShapes((await connect(ENDPOINTS.memoryMcp, writer)).client)).toEqual([
      { name: PROMPT_NAMES.policy, args: [] },
      { name: PROMPT_NAMES.answer, args: ["question", "project?"] },
      { name: PROMPT_NAMES.propose, args: ["scope", "topic", "notes?"] },
    ]);
  });

  it("renders prompts naming only the endpoint's tools, and refuses bad arguments and unknown prompts", async () => {
    const writer = (await connect(ENDPOINTS.memoryMcp, await credential(["memory:read", "memory:write"])))
      .client;
    const text = async (name: string, args?: Record<string, string>) => {
      const result = await writer.getPrompt({ name, ...(args ? { arguments: args } : {}) });
      const content = result.messages[0]?.content;
      return content?.type === "text" ? content.text : "";
    };
    const policy = await text(PROMPT_NAMES.policy);
    expect(policy).toContain("query **memory** first (`memory_query`, then `memory_read_page`)");
    expect(policy).toContain("`memory_write_page` and `memory_feedback` only propose changes");
    expect(policy).not.toMatch(/context_|memory_delete_page/);
    const answer = await text(PROMPT_NAMES.answer, { question: "Who approves refunds?", project: "billing" });
    expect(answer).toContain("Who approves refunds?");
    expect(answer).toContain('`memory_query` with project "billing"');
    expect(answer).not.toContain("context_search");
    const propose = await text(PROMPT_NAMES.propose, { scope: "_global", topic: "release freeze" });
    expect(propose).toContain('`memory_write_page` with scope "_global"');
    expect(propose).toContain("PENDING_HUMAN_APPROVAL");
    expect(propose).toContain("`memory_approval_status`");

    const missing = await refusal(
      writer.getPrompt({ name: PROMPT_NAMES.propose, arguments: { topic: "x" } }),
    );
    expect(missing.code).toBe(ErrorCode.InvalidParams);
    expect(missing.message).toContain("scope");
    const tooLong = await refusal(
      writer.getPrompt({ name: PROMPT_NAMES.answer, arguments: { question: "q".repeat(4001) } }),
    );
    expect(tooLong.code).toBe(ErrorCode.InvalidParams);
    const unknown = await refusal(writer.getPrompt({ name: "ivoai_no_such_prompt" }));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
    // A prompt another credential would get is unknown to this one.
    const notOffered = await refusal(
      writer.getPrompt({ name: PROMPT_NAMES.find, arguments: { source: "a" } }),
    );
    expect(notOffered.code).toBe(ErrorCode.InvalidParams);
  });

  it("completes arguments from the memory store's scopes and the catalogue's connectors", async () => {
    const full = await credential(["context:read", "memory:read", "memory:write"]);
    const onMemory = (await connect(ENDPOINTS.memoryMcp, full)).client;
    const complete = (client: Client, name: string, argument: string, value: string) =>
      client.complete({ ref: { type: "ref/prompt", name }, argument: { name: argument, value } });
    expect((await complete(onMemory, PROMPT_NAMES.answer, "project", "b")).completion.values).toEqual([
      "bi-tools",
      "billing",
    ]);
    expect((await complete(onMemory, PROMPT_NAMES.propose, "scope", "_")).completion.values).toEqual([
      "_global",
    ]);
    // 134 scopes (with _global): the answer holds 100 and says there are more.
    const all = (await complete(onMemory, PROMPT_NAMES.propose, "scope", "")).completion;
    expect(all.values).toHaveLength(100);
    expect(all).toMatchObject({ total: 134, hasMore: true });
    expect((await complete(onMemory, PROMPT_NAMES.answer, "project", "zz")).completion.values).toEqual([]);

    const onContext = (await connect(ENDPOINTS.contextMcp, full)).client;
    expect((await complete(onContext, PROMPT_NAMES.find, "source", "H")).completion.values).toEqual([
      "handbook",
      "hr-wiki",
    ]);
    // Arguments without completion answer nothing; an argument this endpoint does not declare neither.
    expect((await complete(onContext, PROMPT_NAMES.find, "query", "h")).completion.values).toEqual([]);
    expect((await complete(onContext, PROMPT_NAMES.answer, "project", "b")).completion.values).toEqual([]);
    const unknown = await refusal(complete(onContext, "ivoai_no_such_prompt", "x", ""));
    expect(unknown.code).toBe(ErrorCode.InvalidParams);
  });
});

describe("gateway MCP logging", () => {
  const write = (client: Client, pagePath: string) =>
    client.callTool({
      name: "memory_write_page",
      arguments: { scope: "_global", path: pagePath, body: "# Freeze\n\nNo deploys on Fridays." },
    });

  it("remembers a level across requests and sends messages at or above it before the result", async () => {
    const bearer = await credential(["memory:read", "memory:write"]);
    const { client, messages } = await connect(ENDPOINTS.memoryMcp, bearer, {
      "x-ivoai-session-id": "s-one",
    });
    // The same credential in another agent session, and another credential, set no level.
    const other = await connect(ENDPOINTS.memoryMcp, bearer, { "x-ivoai-session-id": "s-two" });
    const stranger = await connect(ENDPOINTS.memoryMcp, await credential(["memory:read", "memory:write"]), {
      "x-ivoai-session-id": "s-one",
    });

    expect(await client.setLoggingLevel("info")).toEqual({});
    const proposed = await write(client, "policies/freeze");
    expect(proposed.structuredContent).toMatchObject({ status: "PENDING_HUMAN_APPROVAL" });
    const approvalId = (proposed.structuredContent as { data: { approval_id: string } }).data.approval_id;
    // info and above only: the debug summary of the call is not sent.
    expect(messages).toEqual([
      {
        level: "info",
        logger: "ivoai",
        data: {
          message: "Change proposed: it waits for a person's approval",
          tool: "memory_write_page",
          approval_id: approvalId,
          scope: "_global",
          path: "policies/freeze",
          poll_with: "memory_approval_status",
        },
      },
    ]);
    const refused = await client.callTool({ name: "memory_query", arguments: { query: "" } });
    expect(refused.isError).toBe(true);
    expect(messages.at(-1)).toMatchObject({
      level: "warning",
      data: { tool: "memory_query", reason: "invalid_arguments" },
    });

    await write(other.client, "policies/other");
    await write(stranger.client, "policies/stranger");
    expect(other.messages).toEqual([]);
    expect(stranger.messages).toEqual([]);

    // A higher level silences info; debug lets every call's summary through.
    expect(await client.setLoggingLevel("warning")).toEqual({});
    const before = messages.length;
    await write(client, "policies/quiet");
    expect(messages.length).toBe(before);
    await client.setLoggingLevel("debug");
    await client.callTool({ name: "memory_status", arguments: {} });
    expect(messages.at(-1)).toMatchObject({
      level: "debug",
      data: { message: "tool call", tool: "memory_status", status: "SUCCESS" },
    });
  });

  it("answers SSE with the message first for a caller with a level, and plain JSON for everyone else", async () => {
    const bearer = await credential(["context:read"]);
    const post = (body: unknown, session: string) =>
      fetch(`${base}${ENDPOINTS.contextMcp}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": "2025-06-18",
          "x-ivoai-session-id": session,
        },
        body: JSON.stringify(body),
      });
    // context:read cannot call a memory tool: the endpoint does not know it, a refusal worth a warning.
    const call = {
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "memory_query", arguments: {} },
    };
    const plain = await post(call, "quiet");
    expect(plain.headers.get("content-type")).toBe("application/json");
    expect(await plain.json()).toMatchObject({ id: 7, result: { isError: true } });

    const set = await post(
      { jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "notice" } },
      "loud",
    );
    expect(await set.json()).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    const streamed = await post(call, "loud");
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    const events = (await streamed.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    expect(events).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/message",
        params: {
          level: "warning",
          logger: "ivoai",
          data: {
            message: "Refused by the guardrail (unknown_tool)",
            tool: "memory_query",
            reason: "unknown_tool",
          },
        },
      },
      expect.objectContaining({ id: 7, result: expect.objectContaining({ isError: true }) }),
    ]);
    // Requests that log nothing keep their JSON answers (tools/list stays on the fast path).
    const listed = await post({ jsonrpc: "2.0", id: 8, method: "tools/list" }, "loud");
    expect(listed.headers.get("content-type")).toBe("application/json");
    // The other session of the same credential keeps the exact JSON answer.
    const still = await post(call, "quiet");
    expect(still.headers.get("content-type")).toBe("application/json");
  });
});
