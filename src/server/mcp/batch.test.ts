import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../shared/logger.js";
import { BATCH_BUDGET_ERROR_CODE } from "./batch.js";
import { createMcpEndpoint } from "./endpoint.js";
import { mcpPost, READER, searchTool, withoutLatency } from "./mcp.test-kit.js";

// Batches: refused under protocol versions without batching; under older ones run one message at a time within
// a budget of messages and answer bytes. Also what every MCP endpoint answers to methods other than POST.
let runs = 0;
let inFlight = 0;
let maxInFlight = 0;
/** Characters of text each call answers. */
let answerChars = 10;

function endpointWith(batchBudget?: { maxMessages: number; maxAnswerBytes: number }) {
  return createMcpEndpoint({
    name: "test",
    instructions: "test",
    logger: silentLogger,
    ...(batchBudget ? { batchBudget } : {}),
    tools: [
      searchTool(
        async ({ query }) => {
          runs += 1;
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await nextTurn();
          inFlight -= 1;
          return { data: { query }, text: "x".repeat(answerChars) };
        },
        { query: z.string() },
      ),
    ],
  });
}
const client = READER;

/** A POST under `version` (none: no header), or a request of another method without a body. */
function request(body: unknown, version: string | null, method = "POST"): Request {
  if (method === "POST") return mcpPost(body, { "mcp-protocol-version": version });
  return new Request("http://127.0.0.1/mcp", {
    method,
    headers: {
      accept: "application/json, text/event-stream",
      ...(version ? { "mcp-protocol-version": version } : {}),
    },
  });
}

function calls(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, index) => ({
    jsonrpc: "2.0",
    id: index,
    method: "tools/call",
    params: { name: "context_search", arguments: { query: `q${index}` } },
  }));
}

function reset(): void {
  runs = 0;
  inFlight = 0;
  maxInFlight = 0;
  answerChars = 10;
}

type Answer = {
  id: number;
  result?: { content: { text: string }[] };
  error?: { code: number; message: string };
};

describe("JSON-RPC batches on an MCP endpoint", () => {
  it("refuses a batch under 2025-06-18 and later (header, or an initialize's requested version), running none", async () => {
    reset();
    const endpoint = endpointWith();
    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    };
    const cases: [unknown[], string | null][] = [
      [calls(3), "2025-06-18"],
      [calls(1), "2025-11-25"],
      [[initialize], null],
      [[initialize], "2025-03-26"],
    ];
    for (const [body, version] of cases) {
      const answer = await endpoint(request(body, version), client);
      expect(answer.status, String(version)).toBe(400);
      expect(await answer.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: expect.stringMatching(/batches are not part of MCP protocol version/),
        },
      });
    }
    expect(runs).toBe(0);
  });

  it("runs a batch under an older version one message at a time, and at most the budget's messages", async () => {
    for (const version of ["2025-03-26", "2024-11-05", null]) {
      reset();
      const endpoint = endpointWith({ maxMessages: 20, maxAnswerBytes: 1024 * 1024 });
      const answer = await endpoint(request(calls(30), version), client);
      expect(answer.status).toBe(200);
      const answers = (await answer.json()) as Answer[];
      expect(answers.map((item) => item.id)).toEqual([...Array(30).keys()]);
      expect(answers.slice(0, 20).every((item) => item.result?.content[0]?.text === "x".repeat(10))).toBe(
        true,
      );
      for (const item of answers.slice(20)) {
        expect(item.error).toMatchObject({
          code: BATCH_BUDGET_ERROR_CODE,
          message: expect.stringMatching(/^Batch budget exceeded: .* at most 20 messages/),
        });
      }
      expect({ version, runs, maxInFlight }).toEqual({ version, runs: 20, maxInFlight: 1 });
    }
  });

  it("answers at most the budget's bytes: a call whose answer would pass it, and every later one, get an error", async () => {
    reset();
    answerChars = 100_000;
    const maxAnswerBytes = 350_000;
    const endpoint = endpointWith({ maxMessages: 100, maxAnswerBytes });
    const answer = await endpoint(request(calls(40), "2025-03-26"), client);
    const body = await answer.text();
    const answers = JSON.parse(body) as Answer[];
    const answered = answers.filter((item) => item.result).length;
    expect(answered).toBeGreaterThan(0);
    expect(answers.slice(answered).every((item) => item.error?.code === BATCH_BUDGET_ERROR_CODE)).toBe(true);
    // Each answer carries its text twice at most (content and nothing else here), so the whole stays bounded.
    expect(Buffer.byteLength(body)).toBeLessThan(maxAnswerBytes + 40 * 400);
    // Only the call that crossed the budget ran beyond those answered.
    expect(runs).toBe(answered + 1);
  });

  it("answers each request of a legacy batch as the same request sent alone", async () => {
    reset();
    const endpoint = endpointWith();
    const messages = [...calls(2), { jsonrpc: "2.0", id: "list", method: "tools/list" }];
    const batch = (await (await endpoint(request(messages, "2025-03-26"), client)).json()) as Answer[];
    const alone: unknown[] = [];
    for (const message of messages)
      alone.push(await (await endpoint(request(message, "2025-03-26"), client)).json());
    expect(batch.map(withoutLatency)).toEqual(alone.map(withoutLatency));
  });

  it("answers a batch of notifications with 202 and a mixed batch with the requests' answers only", async () => {
    reset();
    const endpoint = endpointWith();
    const notification = { jsonrpc: "2.0", method: "notifications/initialized" };
    const none = await endpoint(request([notification, notification], "2025-03-26"), client);
    expect(none.status).toBe(202);
    const mixed = await endpoint(request([notification, ...calls(1)], "2025-03-26"), client);
    expect(await mixed.json()).toMatchObject({ id: 0, result: { content: [{ text: "x".repeat(10) }] } });
  });

  it("leaves a batch the transport refuses whole (malformed member, over 100 messages) to the SDK", async () => {
    reset();
    const endpoint = endpointWith();
    const malformed = await endpoint(request([...calls(2), { id: 9 }], "2025-03-26"), client);
    expect([malformed.status, ((await malformed.json()) as Answer).error?.code]).toEqual([400, -32700]);
    const long = await endpoint(request(calls(101), "2025-03-26"), client);
    expect([long.status, ((await long.json()) as Answer).error?.code]).toEqual([400, -32600]);
    expect(runs).toBe(0);
  });
});

describe("an MCP endpoint's methods and capabilities", () => {
  it("answers 405 with Allow: POST to GET, DELETE and PUT: no stream and no session are served", async () => {
    const endpoint = endpointWith();
    for (const method of ["GET", "DELETE", "PUT"]) {
      const answer = await endpoint(request(undefined, "2025-06-18", method), client);
      expect([method, answer.status, answer.headers.get("allow")]).toEqual([method, 405, "POST"]);
      expect(answer.headers.get("content-type")).toBe("application/json");
      await answer.text();
    }
  });

  it("declares tools.listChanged false, with tools offered and without", async () => {
    const endpoint = endpointWith();
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    };
    for (const scopes of [["context:read"], ["memory:read"]] as const) {
      const answer = await endpoint(request(initialize, null), { ...client, scopes: [...scopes] });
      const result = (await answer.json()) as { result: { capabilities: { tools: unknown } } };
      expect(result.result.capabilities.tools).toEqual({ listChanged: false });
    }
  });
});
