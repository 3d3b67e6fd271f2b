import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import { TOOL_NAMES, TOOLS, WEB_TOOL_NAMES, WRITE_TOOL_NAMES } from "../../protocol/tools.js";
import { silentLogger } from "../../shared/logger.js";
import { type ContextService, openContextService } from "../context/service.js";
import { type MemoryService, openMemoryService } from "../memory/service.js";
import { WEB_TOOLS } from "../web-mcp/routes.js";

describe("the protocol's tool table", () => {
  let dir: string;
  let context: ContextService;
  let memory: MemoryService;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-tools-"));
    const config = serverConfigSchema.parse({ server: { public_url: "https://ai.example.com" } });
    const paths = serverPaths(dir);
    await mkdir(paths.contextDir, { recursive: true });
    await mkdir(paths.memoryDir, { recursive: true });
    context = openContextService({ paths, config, logger: silentLogger });
    memory = await openMemoryService({ paths, config, logger: silentLogger });
  });
  afterAll(async () => {
    await context?.close();
    await memory?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("holds every tool the server registers, with the same tier and scope, and nothing else", () => {
    const registered = [...context.tools, ...memory.tools].map((tool) => ({
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
