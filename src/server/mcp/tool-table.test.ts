import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_NAMES, TOOLS, WEB_TOOL_NAMES, WRITE_TOOL_NAMES } from "../../protocol/tools.js";
import { WEB_TOOLS } from "../web-mcp/routes.js";
import { openServices, type ServicesKit } from "./mcp.test-kit.js";

describe("the protocol's tool table", () => {
  let kit: ServicesKit;
  beforeAll(async () => {
    kit = await openServices("ivoai-tools-");
  });
  afterAll(async () => {
    await kit?.close();
  });

  it("holds every tool the server registers, with the same tier and scope, and nothing else", () => {
    const registered = [...kit.context.tools, ...kit.memory.tools].map((tool) => ({
      name: tool.name,
      tier: tool.tier,
      scope: tool.scope,
    }));
    expect(registered).toEqual(
      registered.map((tool) => ({
        name: tool.name,
        tier: TOOLS[tool.name].tier,
        scope: TOOLS[tool.name].scope,
      })),
    );
    expect(registered.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
  });

  it("derives the write set and the Web MCP allow-list from the table", () => {
    expect([...WRITE_TOOL_NAMES].sort()).toEqual([
      "memory_delete_page",
      "memory_feedback",
      "memory_promote_episode",
      "memory_write_page",
    ]);
    expect([...WEB_TOOLS].sort()).toEqual([...WEB_TOOL_NAMES].sort());
    expect(WEB_TOOLS.has("memory_promote_episode")).toBe(false);
  });
});
