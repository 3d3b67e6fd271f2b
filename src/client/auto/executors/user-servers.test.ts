// AUTO gives the user's MCP servers to its turns: the primary gets every enabled one, a read-only worker only
// those marked read-only (the router refuses the others to a worker's capability as well).
import { describe, expect, it } from "vitest";
import { buildClaudeMcpConfig } from "./claude.js";
import { codexMcpOverrides } from "./codex.js";

const base = "http://127.0.0.1:4567";
const knowledge = {
  endpoints: { memory: `${base}/mcp/memory`, context: `${base}/mcp/context` },
  tokenEnv: "IVOAI_ROUTER_TOKEN",
  user: [
    { name: "docs", url: `${base}/mcp/user/docs`, read_only: true },
    { name: "deploy", url: `${base}/mcp/user/deploy`, read_only: false },
  ],
};

function codexServers(role: "primary" | "worker"): string[] {
  return codexMcpOverrides({ role, knowledge, extraMcp: [] }).flatMap(
    (arg) => /^mcp_servers\.([^.]+)\.url=/.exec(arg)?.[1] ?? [],
  );
}

function claudeServers(role: "primary" | "worker"): string[] {
  return Object.keys(buildClaudeMcpConfig({ role, knowledge, extraMcp: [] }).mcpServers);
}

describe("user MCP servers in AUTO turns", () => {
  it("the primary gets every user server beside ivoai's", () => {
    expect(codexServers("primary").sort()).toEqual(["deploy", "docs", "ivoai-context", "ivoai-memory"]);
    expect(claudeServers("primary").sort()).toEqual(["deploy", "docs", "ivoai-context", "ivoai-memory"]);
  });

  it("a read-only worker never gets a server not marked read-only", () => {
    expect(codexServers("worker").sort()).toEqual(["docs", "ivoai-context", "ivoai-memory"]);
    expect(claudeServers("worker").sort()).toEqual(["docs", "ivoai-context", "ivoai-memory"]);
  });
});
