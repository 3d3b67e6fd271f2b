// The router's resources, prompts, completion and logging against two real upstream SDK servers over HTTP:
// merged paging, priority and failover on reads, provenance, the read-only capability, an upstream down.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  type CallToolResult,
  ListResourcesRequestSchema,
  type LoggingLevel,
  LoggingMessageNotificationSchema,
  McpError,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { ServerProfile } from "../../config/client-config.js";
import { PROMPT_NAMES } from "../../protocol/prompts.js";
import { type RunningRouter, startRouter } from "./router.js";
import type { Source } from "./selection.js";

const TEMPLATE = "ivoai://context/{source}/{+path}";
const PAGE = 3;

interface Upstream {
  alias: string;
  url: string;
  /** Levels this upstream was asked to log at, in order. */
  levels: LoggingLevel[];
  reads: string[];
  stop(): Promise<void>;
}

/** A stateless SDK server like the gateway's: a paginated template list, prompts with completion, logging. */
async function startUpstream(alias: string, paths: string[], sources: string[]): Promise<Upstream> {
  const state: Upstream = { alias, url: "", levels: [], reads: [], stop: async () => undefined };
  const uriOf = (path: string) => `ivoai://context/docs/${path}`;
  const build = () => {
    const mcp = new McpServer({ name: alias, version: "1" }, { capabilities: { logging: {} } });
    mcp.registerResource(
      "context-document",
      new ResourceTemplate(TEMPLATE, {
        list: undefined,
        complete: { source: (value) => sources.filter((source) => source.startsWith(value)) },
      }),
      { mimeType: "text/markdown" },
      async (uri, variables, extra) => {
        const path = decodeURIComponent(String(variables.path));
        state.reads.push(path);
        if (state.levels.length > 0) {
          await extra.sendNotification({
            method: "notifications/message",
            params: { level: "info", logger: "reader", data: `read ${path}` },
          });
        }
        if (!paths.includes(path) || variables.source !== "docs") {
          throw new McpError(-32002, `Resource ${uri.href} not found`);
        }
        return {
          contents: [{ uri: uri.href, mimeType: "text/markdown", text: `${alias}:${path}` }],
          _meta: { "ivoai/untrusted": true },
        };
      },
    );
    mcp.server.setRequestHandler(ListResourcesRequestSchema, (request) => {
      const offset = request.params?.cursor === undefined ? 0 : Number(request.params.cursor);
      if (!Number.isInteger(offset) || offset < 0 || offset > paths.length) {
        throw new McpError(-32602, "invalid cursor");
      }
      const page = paths.slice(offset, offset + PAGE);
      return {
        resources: page.map((path) => ({ uri: uriOf(path), name: path })),
        ...(offset + PAGE < paths.length ? { nextCursor: String(offset + PAGE) } : {}),
      };
    });
    mcp.registerPrompt(
      "ivoai_find_document",
      {
        description: `find a document (${alias})`,
        argsSchema: {
          source: completable(z.string(), (value) => sources.filter((source) => source.startsWith(value))),
          query: z.string(),
        },
      },
      ({ source, query }) => ({
        messages: [{ role: "user", content: { type: "text", text: `${alias}: find ${query} in ${source}` } }],
      }),
    );
    mcp.registerPrompt(`only_${alias}`, { description: alias }, () => ({
      messages: [{ role: "user", content: { type: "text", text: `only ${alias}` } }],
    }));
    mcp.registerTool("context_reindex", { description: "rebuilds the index (a write)" }, () => ({
      content: [{ type: "text", text: `reindexed ${alias}` }],
    }));
    mcp.server.setRequestHandler(SetLevelRequestSchema, (request) => {
      state.levels.push(request.params.level);
      return {};
    });
    return mcp;
  };
  const server = http.createServer((req, res) => {
    const mcp = build();
    // Like the gateway: once the session set a level, answers are SSE so log messages can precede them.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: state.levels.length === 0 });
    res.on("close", () => void mcp.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}

/** A server as ivoai was before resources: tools only, recording the methods it is asked. */
async function startToolsOnly(): Promise<{ url: string; requests: string[]; stop(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const mcp = new McpServer({ name: "old", version: "1" });
    mcp.registerTool("old_tool", { description: "a read", annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: "text", text: "old" }],
    }));
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on("close", () => void mcp.close());
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const parsed = JSON.parse(body || "{}") as { method?: string };
      if (parsed.method) requests.push(parsed.method);
      void mcp.connect(transport).then(() => transport.handleRequest(req, res, parsed));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A server offering ivoai's prompts, the propose one among them (a prompt that leads to a write). */
async function startPrompts(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const mcp = new McpServer({ name: "prompts", version: "1" });
    mcp.registerTool("memory_query", { description: "a read", annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: "text", text: "found" }],
    }));
    mcp.registerPrompt(
      PROMPT_NAMES.propose,
      {
        description: "propose a memory page",
        argsSchema: { scope: completable(z.string(), () => ["_global", "billing"]), topic: z.string() },
      },
      ({ scope, topic }) => ({
        messages: [
          { role: "user", content: { type: "text", text: `call memory_write_page in ${scope}: ${topic}` } },
        ],
      }),
    );
    mcp.registerPrompt(PROMPT_NAMES.policy, { description: "the policy" }, () => ({
      messages: [{ role: "user", content: { type: "text", text: "memory first" } }],
    }));
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on("close", () => void mcp.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const source = (alias: string, url: string, extra: Partial<ServerProfile> = {}): Source => ({
  profile: {
    id: `srv_${alias}`,
    alias,
    url,
    purpose: alias,
    priority: 100,
    enabled: true,
    protocol_version: 1,
    endpoints: { context: "/v1/mcp/context", memory: "/v1/memory/mcp", hooks: "/v1/memory" },
    features: { memory: false },
    ...extra,
  },
  token: `cred_${alias}`,
});

async function connect(url: string, capability: string): Promise<Client> {
  const client = new Client({ name: "agent", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${capability}` } },
    }),
  );
  return client;
}

const ALPHA = ["a1.md", "a2.md", "a3.md", "a4.md", "a5.md", "shared.md", "dir/deep.md"];
const BETA = ["b1.md", "b2.md", "shared.md", "b4.md", "b5.md"];

describe("the router's resources, prompts, completion and logging", () => {
  let alpha: Upstream;
  let beta: Upstream;
  const routers: RunningRouter[] = [];
  const clients: Client[] = [];
  const open = async (sources: Source[], readOnly = false) => {
    const router = await startRouter({ sources, deadlineMs: 5_000, sessionId: "sess-1" });
    routers.push(router);
    const client = await connect(
      router.endpoints.context,
      readOnly ? router.readOnlyCapability : router.capability,
    );
    clients.push(client);
    return { router, client };
  };
  const both = () => [
    source("alpha", alpha.url, { priority: 10 }),
    source("beta", beta.url, { priority: 20 }),
  ];

  beforeAll(async () => {
    alpha = await startUpstream("alpha", ALPHA, ["docs", "drive"]);
    beta = await startUpstream("beta", BETA, ["docs", "wiki"]);
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    for (const router of routers) await router.close();
    await alpha.stop();
    await beta.stop();
  });

  it("declares the surface and pages one merged list through nextCursor, with provenance", async () => {
    const { router, client } = await open(both());
    const get = await fetch(router.endpoints.context, {
      headers: { authorization: `Bearer ${router.capability}`, accept: "text/event-stream" },
    });
    expect(get.status).toBe(405);
    expect(client.getServerCapabilities()).toMatchObject({
      resources: {},
      prompts: {},
      completions: {},
      logging: {},
    });
    const seen: { uri: string; alias: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor === undefined ? undefined : { cursor });
      for (const resource of page.resources) {
        seen.push({
          uri: resource.uri,
          alias: (resource._meta?.["ivoai/source"] as { alias: string } | undefined)?.alias ?? "",
        });
      }
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor && pages < 20);
    // alpha first (priority 10), each upstream page as it came: no gap, no repeat, no lost page.
    expect(seen).toEqual([
      ...ALPHA.map((path) => ({ uri: `ivoai://context/docs/${path}`, alias: "alpha" })),
      ...BETA.map((path) => ({ uri: `ivoai://context/docs/${path}`, alias: "beta" })),
    ]);
    expect(pages).toBe(Math.ceil(ALPHA.length / PAGE) + Math.ceil(BETA.length / PAGE));

    for (const bad of ["not-a-cursor", Buffer.from('{"k":"nowhere/#x"}').toString("base64url")]) {
      await expect(client.listResources({ cursor: bad })).rejects.toMatchObject({ code: -32602 });
    }
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      TEMPLATE,
    ]);
  });

  it("reads from the first source in priority order that has the resource, naming it", async () => {
    const { client } = await open(both());
    const shared = await client.readResource({ uri: "ivoai://context/docs/shared.md" });
    expect(shared.contents[0]).toMatchObject({ text: "alpha:shared.md" });
    expect(shared._meta).toMatchObject({ "ivoai/untrusted": true, "ivoai/source": { alias: "alpha" } });

    const onlyBeta = await client.readResource({ uri: "ivoai://context/docs/b4.md" });
    expect(onlyBeta.contents[0]).toMatchObject({ text: "beta:b4.md" });
    expect(onlyBeta._meta?.["ivoai/source"]).toMatchObject({ alias: "beta", purpose: "beta" });

    const nested = await client.readResource({ uri: "ivoai://context/docs/dir/deep.md" });
    expect(nested.contents[0]).toMatchObject({ text: "alpha:dir/deep.md" });

    // "Not found" is an answer from a healthy source: many of them never open its circuit.
    for (let attempt = 0; attempt < 4; attempt++) {
      await expect(client.readResource({ uri: "ivoai://context/docs/missing.md" })).rejects.toMatchObject({
        code: -32002,
        message: expect.stringContaining("ivoai://context/docs/missing.md not found"),
      });
    }
    expect((await client.readResource({ uri: "ivoai://context/docs/shared.md" }))._meta).toMatchObject({
      "ivoai/source": { alias: "alpha" },
    });
  });

  it("adds nothing from a source that offers only tools, which stays healthy", async () => {
    const toolsOnly = await startToolsOnly();
    try {
      const { client } = await open([
        source("alpha", alpha.url, { priority: 10 }),
        source("old", toolsOnly.url, { priority: 5 }),
      ]);
      const page = await client.listResources();
      expect(page.resources.map((resource) => resource.uri)).toEqual(
        ALPHA.slice(0, PAGE).map((path) => `ivoai://context/docs/${path}`),
      );
      expect(page._meta).toBeUndefined();
      expect((await client.readResource({ uri: "ivoai://context/docs/a1.md" })).contents[0]).toMatchObject({
        text: "alpha:a1.md",
      });
      expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("only_alpha");
      await client.setLoggingLevel("debug");
      await client.setLoggingLevel("warning");
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain("old_tool");
      expect(
        toolsOnly.requests.filter(
          (method) => method !== "initialize" && method !== "notifications/initialized",
        ),
      ).toEqual(["tools/list"]);
    } finally {
      await toolsOnly.stop();
    }
  });

  it("fails over within a redundancy group when the primary is down", async () => {
    const gone = http.createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const downUrl = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
    await new Promise((resolve) => gone.close(resolve));
    const { client } = await open([
      source("acme-1", downUrl, { purpose: "acme", redundancy_group: "acme", priority: 1 }),
      source("acme-2", alpha.url, { purpose: "acme", redundancy_group: "acme", priority: 2 }),
      source("beta", beta.url, { priority: 20 }),
    ]);
    const read = await client.readResource({ uri: "ivoai://context/docs/a1.md" });
    expect(read.contents[0]).toMatchObject({ text: "alpha:a1.md" });
    expect(read._meta?.["ivoai/source"]).toMatchObject({ alias: "acme-2", failed_over_from: ["acme-1"] });
    const listed = await client.listResources();
    expect(listed.resources[0]?._meta?.["ivoai/source"]).toMatchObject({ alias: "acme-2" });
  });

  it("unions prompts (first wins), gets a prompt from the source that has it, dedupes completions", async () => {
    const { client } = await open(both());
    const prompts = (await client.listPrompts()).prompts;
    expect(prompts.map((prompt) => prompt.name).sort()).toEqual([
      "ivoai_find_document",
      "only_alpha",
      "only_beta",
    ]);
    expect(prompts.find((prompt) => prompt.name === "ivoai_find_document")).toMatchObject({
      description: "find a document (alpha)",
      _meta: { "ivoai/source": { alias: "alpha" } },
    });
    expect(prompts.find((prompt) => prompt.name === "only_beta")?._meta?.["ivoai/source"]).toMatchObject({
      alias: "beta",
    });
    const got = await client.getPrompt({ name: "only_beta" });
    expect(got.messages[0]?.content).toMatchObject({ text: "only beta" });
    expect(got._meta?.["ivoai/source"]).toMatchObject({ alias: "beta" });
    const found = await client.getPrompt({
      name: "ivoai_find_document",
      arguments: { source: "docs", query: "deploy" },
    });
    expect(found.messages[0]?.content).toMatchObject({ text: "alpha: find deploy in docs" });
    await expect(client.getPrompt({ name: "nowhere" })).rejects.toMatchObject({ code: -32602 });

    const byTemplate = await client.complete({
      ref: { type: "ref/resource", uri: TEMPLATE },
      argument: { name: "source", value: "" },
    });
    expect(byTemplate.completion.values).toEqual(["docs", "drive", "wiki"]);
    const byPrompt = await client.complete({
      ref: { type: "ref/prompt", name: "ivoai_find_document" },
      argument: { name: "source", value: "d" },
    });
    expect(byPrompt.completion.values).toEqual(["docs", "drive"]);
    await expect(
      client.complete({
        ref: { type: "ref/resource", uri: "ivoai://other/{x}" },
        argument: { name: "x", value: "" },
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });

  it("forwards logging/setLevel to every source and relays their messages on the next answer", async () => {
    const { client } = await open(both());
    const messages: { level: string; logger?: string | undefined; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      messages.push(notification.params);
    });
    const alphaBefore = alpha.levels.length;
    expect(await client.setLoggingLevel("info")).toEqual({});
    expect(alpha.levels.slice(alphaBefore)).toEqual(["info"]);
    expect(beta.levels.at(-1)).toBe("info");
    await client.readResource({ uri: "ivoai://context/docs/b1.md" });
    // alpha was asked first (not found there), then beta: both logged the read.
    await vi.waitFor(() =>
      expect(messages).toEqual([
        { level: "info", logger: "alpha/reader", data: "read b1.md" },
        { level: "info", logger: "beta/reader", data: "read b1.md" },
      ]),
    );
    // Messages below the session's level are not relayed.
    await client.setLoggingLevel("error");
    messages.length = 0;
    await client.readResource({ uri: "ivoai://context/docs/a2.md" });
    await client.listPrompts();
    expect(messages).toEqual([]);
  });

  it("lets the read-only capability list, read and get prompts, but not write", async () => {
    const { client } = await open([source("alpha", alpha.url)], true);
    expect((await client.listResources()).resources).toHaveLength(PAGE);
    const read = await client.readResource({ uri: "ivoai://context/docs/a1.md" });
    expect(read._meta?.["ivoai/source"]).toMatchObject({ alias: "alpha" });
    expect((await client.getPrompt({ name: "only_alpha" })).messages).toHaveLength(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("context_reindex");
    const write = (await client.callTool({ name: "context_reindex", arguments: {} })) as CallToolResult;
    expect(write.isError).toBe(true);
    expect(JSON.stringify(write.content)).toContain("READ_ONLY_WORKER");
  });

  it("hides a prompt that proposes a write from the read-only capability: not listed, got or completed", async () => {
    const upstream = await startPrompts();
    try {
      const sources = [source("memo", upstream.url, { features: { memory: true } })];
      const router = await startRouter({ sources, deadlineMs: 5_000, sessionId: "sess-2" });
      routers.push(router);
      const full = await connect(router.endpoints.memory, router.capability);
      const reader = await connect(router.endpoints.memory, router.readOnlyCapability);
      clients.push(full, reader);
      expect((await full.listPrompts()).prompts.map((prompt) => prompt.name).sort()).toEqual([
        PROMPT_NAMES.policy,
        PROMPT_NAMES.propose,
      ]);
      expect((await reader.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
        PROMPT_NAMES.policy,
      ]);
      await expect(
        reader.getPrompt({ name: PROMPT_NAMES.propose, arguments: { scope: "_global", topic: "t" } }),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(
        reader.complete({
          ref: { type: "ref/prompt", name: PROMPT_NAMES.propose },
          argument: { name: "scope", value: "" },
        }),
      ).rejects.toMatchObject({ code: -32602 });
      expect((await reader.getPrompt({ name: PROMPT_NAMES.policy })).messages).toHaveLength(1);
      // The primary agent keeps it.
      const got = await full.getPrompt({
        name: PROMPT_NAMES.propose,
        arguments: { scope: "_global", topic: "t" },
      });
      expect(got.messages[0]?.content).toMatchObject({ text: "call memory_write_page in _global: t" });
    } finally {
      await upstream.stop();
    }
  });

  it("passes a single source's answers through unchanged with the full capability", async () => {
    const { router, client } = await open([source("alpha", alpha.url)]);
    const page = await client.listResources();
    // The upstream's own cursor and no router provenance: the exchange was forwarded as it is.
    expect(page.nextCursor).toBe(String(PAGE));
    expect(page.resources[0]?._meta).toBeUndefined();
    const read = await client.readResource({ uri: "ivoai://context/docs/a1.md" });
    expect(read._meta).toEqual({ "ivoai/untrusted": true });
    expect((await client.getPrompt({ name: "only_alpha" })).messages).toHaveLength(1);
    const get = await fetch(router.endpoints.context, {
      headers: { authorization: `Bearer ${router.capability}`, accept: "text/event-stream" },
    });
    expect(get.status).toBe(405);
  });

  it("answers malformed params with -32602 and a one-line reason, not an internal error", async () => {
    const { router } = await open(both(), true);
    const ask = async (method: string, params: unknown) => {
      const response = await fetch(router.endpoints.context, {
        method: "POST",
        headers: {
          authorization: `Bearer ${router.readOnlyCapability}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await response.json()) as { error?: { code: number; message: string } }).error;
    };
    for (const [method, params] of [
      ["resources/read", {}],
      ["resources/list", { cursor: 5 }],
      [
        "completion/complete",
        { ref: { type: "ref/resource", name: "x" }, argument: { name: "a", value: "" } },
      ],
      ["logging/setLevel", { level: "loud" }],
      ["prompts/get", { name: "only_alpha", arguments: { a: 5 } }],
      ["tools/call", { arguments: {} }],
    ] as const) {
      const error = await ask(method, params);
      expect(error?.code).toBe(-32602);
      expect(error?.message).toMatch(/Invalid params: params/);
      expect(error?.message).not.toContain("\n");
    }
  });

  it("answers from the other sources when one is down, saying the list is partial", async () => {
    const down = await startUpstream("down", ["d1.md"], ["docs"]);
    const { client } = await open([
      source("alpha", alpha.url, { priority: 10 }),
      source("down", down.url, { priority: 15 }),
    ]);
    await down.stop();
    const listed: string[] = [];
    let partial = false;
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? undefined : { cursor });
      listed.push(...page.resources.map((resource) => resource.uri));
      if (page._meta?.["ivoai/federation"]) partial = true;
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed).toEqual(ALPHA.map((path) => `ivoai://context/docs/${path}`));
    expect(partial).toBe(true);
    expect((await client.readResource({ uri: "ivoai://context/docs/a1.md" })).contents[0]).toMatchObject({
      text: "alpha:a1.md",
    });
    await expect(client.readResource({ uri: "ivoai://context/docs/d1.md" })).rejects.toMatchObject({
      code: -32002,
      message: expect.stringContaining("unavailable: down"),
    });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain("only_alpha");
    expect(await client.setLoggingLevel("warning")).toEqual({});

    // Nothing at all could be listed: an error, not an empty list.
    const alone = await open([source("down", down.url)], true);
    await expect(alone.client.listResources()).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("no knowledge source answered resources/list"),
    });
    // The caller's URI comes back in the error cut short, its control characters escaped.
    const hostile = `ivoai://context/docs/\u001b[2J${"x".repeat(5000)}.md`;
    const error = (await alone.client
      .readResource({ uri: hostile })
      .catch((caught: unknown) => caught)) as Error;
    expect(error.message).toContain("could not be read");
    expect(error.message).toContain("\\x1b[2J");
    expect(error.message).not.toContain("\u001b");
    expect(error.message.length).toBeLessThan(1000);
  });
});
