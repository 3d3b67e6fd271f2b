import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { createLogLevelStore, createMcpLog, logLevelKey } from "./logging.js";

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
