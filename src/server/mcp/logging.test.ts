import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../shared/logger.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { createMcpEndpoint } from "./endpoint.js";
import { createLogLevelStore, createMcpLog, logLevelKey } from "./logging.js";
import { mcpPost, searchTool } from "./mcp.test-kit.js";

describe("log level store", () => {
  it("forgets the least recently used caller beyond its bound", () => {
    const store = createLogLevelStore({ maxEntries: 3 });
    store.set("a", "info");
    store.set("b", "debug");
    store.set("c", "error");
    // Reading a refreshes it: b becomes the oldest.
    expect(store.get("a")).toBe("info");
    store.set("d", "warning");
    expect(store.size).toBe(3);
    expect(store.get("b")).toBeUndefined();
    expect([store.get("a"), store.get("c"), store.get("d")]).toEqual(["info", "error", "warning"]);
    // Setting again replaces without growing.
    store.set("a", "debug");
    expect(store.size).toBe(3);
    expect(store.get("a")).toBe("debug");
  });

  it("forgets a level unused for its time to live, and keeps one in use", () => {
    let now = 0;
    const store = createLogLevelStore({ ttlMs: 1000, now: () => now });
    store.set("used", "info");
    store.set("idle", "info");
    now = 900;
    expect(store.get("used")).toBe("info");
    now = 1500;
    expect(store.get("used")).toBe("info");
    expect(store.get("idle")).toBeUndefined();
    expect(store.size).toBe(1);
  });

  it("keeps one credential inventing session ids from pushing out every other caller's level", () => {
    const store = createLogLevelStore({ maxEntries: 10, maxPerCredential: 3 });
    store.set(logLevelKey("cli_other", "s"), "info");
    for (let index = 0; index < 50; index++) store.set(logLevelKey("cli_flood", `s${index}`), "debug");
    expect(store.get(logLevelKey("cli_other", "s"))).toBe("info");
    expect(store.size).toBe(4);
    // The flooding credential keeps its most recent sessions.
    expect(store.get(logLevelKey("cli_flood", "s49"))).toBe("debug");
    expect(store.get(logLevelKey("cli_flood", "s46"))).toBeUndefined();
    // Another session of the other credential is still welcome.
    store.set(logLevelKey("cli_other", "t"), "error");
    expect(store.get(logLevelKey("cli_other", "t"))).toBe("error");
  });

  it("keys a level by credential and agent session", () => {
    expect(logLevelKey("cli_a", "s1")).not.toBe(logLevelKey("cli_a", "s2"));
    expect(logLevelKey("cli_a", null)).not.toBe(logLevelKey("cli_b", null));
    expect(logLevelKey("cli_a", null)).not.toBe(logLevelKey("cli_a", "s1"));
  });
});

describe("MCP log", () => {
  it("sends messages at or above the threshold as notifications/message, and survives a failed send", async () => {
    const sent: ServerNotification[] = [];
    const log = createMcpLog("notice", async (notification) => {
      sent.push(notification);
    });
    await log("debug", { message: "d" });
    await log("info", { message: "i" });
    await log("notice", { message: "n" });
    await log("emergency", { message: "e" });
    expect(sent).toEqual([
      {
        method: "notifications/message",
        params: { level: "notice", logger: "ivoai", data: { message: "n" } },
      },
      {
        method: "notifications/message",
        params: { level: "emergency", logger: "ivoai", data: { message: "e" } },
      },
    ]);
    const broken = createMcpLog("debug", async () => {
      throw new Error("stream closed");
    });
    await expect(broken("error", { message: "x" })).resolves.toBeUndefined();
  });
});

describe("MCP endpoint log messages", () => {
  const endpoint = createMcpEndpoint({
    name: "test",
    instructions: "test",
    logger: silentLogger,
    maxResultChars: 20,
    slowCallMs: 0,
    tools: [searchTool(async ({ query }) => ({ data: { query }, text: `found ${query}` }))],
  });
  const client: AuthenticatedClient = { id: "cli_log", name: "l", scopes: ["context:read"] };
  const post = (body: unknown) =>
    endpoint(mcpPost(body, { "mcp-protocol-version": null, "x-ivoai-session-id": "sess-log" }), client);
  const search = (query: string) => ({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "context_search", arguments: { query } },
  });
  /** The SSE events' JSON-RPC messages, in order. */
  const events = async (response: Response) =>
    (await response.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map(
        (line) => JSON.parse(line.slice(6)) as { method?: string; params?: { level: string; data: unknown } },
      );

  it("reports slow reads and results too large, never the result's text", async () => {
    await post({ jsonrpc: "2.0", id: 1, method: "logging/setLevel", params: { level: "notice" } });
    const slow = await events(await post(search("alpha")));
    expect(slow.map((event) => event.method ?? "result")).toEqual(["notifications/message", "result"]);
    expect(slow[0]?.params).toMatchObject({ level: "notice", data: { tool: "context_search" } });
    const large = await events(await post(search("a long query that makes a long answer")));
    expect(large.map((event) => event.params?.level ?? "result")).toEqual(["warning", "notice", "result"]);
    expect(large[0]?.params?.data).toMatchObject({
      message: "The result is too large to return",
      limit_chars: 20,
    });
    expect(JSON.stringify(large.slice(0, 2))).not.toContain("long answer");
  });
});
