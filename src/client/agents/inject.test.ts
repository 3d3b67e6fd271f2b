// Each CLI is given the user's MCP servers by their router endpoints beside ivoai's (only loopback URLs and the
// capability's variable name), and only them when no ivoai server is selected.
import { describe, expect, it } from "vitest";
import { buildInjection, TOKEN_ENV } from "./inject.js";

const base = "http://127.0.0.1:4567";
const router = {
  endpoints: { context: `${base}/mcp/context`, memory: `${base}/mcp/memory`, hooks: `${base}/hooks/memory` },
  user: [{ name: "docs", url: `${base}/mcp/user/docs` }],
};
const input = (knowledge: boolean) => ({
  router: { ...router, knowledge },
  runtimeDir: "/run/s",
  hookCommand: ["node", "ivoai.js"],
});

function names(agent: "codex" | "claude" | "opencode", knowledge: boolean): string[] {
  const injection = buildInjection(agent, input(knowledge));
  if (agent === "codex") {
    return injection.args.flatMap((arg) => /^mcp_servers\.([^.]+)\.url=/.exec(arg)?.[1] ?? []);
  }
  if (agent === "claude") {
    const file = injection.files.find((entry) => entry.name === "mcp.json");
    return Object.keys(JSON.parse(file?.content ?? "{}").mcpServers ?? {});
  }
  return Object.keys(JSON.parse(injection.env.OPENCODE_CONFIG_CONTENT ?? "{}").mcp ?? {});
}

describe("buildInjection with user MCP servers", () => {
  for (const agent of ["codex", "claude", "opencode"] as const) {
    it(`${agent}: the user's server beside ivoai's, and alone without ivoai knowledge`, () => {
      expect(names(agent, true).sort()).toEqual(["docs", "ivoai-context", "ivoai-memory"]);
      expect(names(agent, false)).toEqual(["docs"]);
      const text = JSON.stringify(buildInjection(agent, input(true)));
      expect(text).toContain(`${base}/mcp/user/docs`);
      expect(text).toContain(TOKEN_ENV);
    });
  }

  it("installs no knowledge policy or memory hooks when only user servers are served", () => {
    const codex = buildInjection("codex", input(false)).args.join(" ");
    expect(codex).not.toMatch(/developer_instructions|notify=/);
    const claude = buildInjection("claude", input(false));
    expect(claude.files.map((file) => file.name)).toEqual(["mcp.json"]);
    expect(buildInjection("opencode", input(false)).files).toEqual([]);
  });
});
