// How each official CLI receives the session's router endpoints, per process: structured argv, environment
// variable names for the capability (never the value in argv), and private runtime files.

import { shellQuote } from "../../shared/shell-quote.js";
import type { AgentName } from "./catalog.js";
import { KNOWLEDGE_POLICY } from "./policy.js";

export const TOKEN_ENV = "IVOAI_ROUTER_TOKEN";

export interface RouterView {
  endpoints: { context: string; memory: string; hooks: string };
  /** False when the router serves only the user's own MCP servers (no ivoai server selected). */
  knowledge?: boolean;
  /** The user's own MCP servers, each at its router endpoint, beside ivoai's. */
  user?: readonly { name: string; url: string }[];
}

/** The MCP servers a CLI is given: ivoai's two (with knowledge) and the user's, by name. */
function mcpEntries(router: RouterView): [string, string][] {
  const ivoai: [string, string][] =
    router.knowledge === false
      ? []
      : [
          ["ivoai-memory", router.endpoints.memory],
          ["ivoai-context", router.endpoints.context],
        ];
  return [...ivoai, ...(router.user ?? []).map((entry): [string, string] => [entry.name, entry.url])];
}

export interface PrivateFile {
  /** Name inside the session's private runtime directory. */
  name: string;
  content: string;
}

export interface Injection {
  /** Inserted before the user's own arguments. */
  args: string[];
  env: Record<string, string>;
  files: PrivateFile[];
}

export interface InjectionInput {
  router: RouterView | undefined;
  /** Absolute path of the runtime directory the files will be written to. */
  runtimeDir: string;
  /** How to run `ivoai hook …` (node + script), for lifecycle hooks. */
  hookCommand: string[];
}

const toml = (value: string) => JSON.stringify(value);

export function buildInjection(agent: AgentName, input: InjectionInput): Injection {
  const { router } = input;
  switch (agent) {
    case "codex": {
      const args: string[] = [];
      if (router) {
        // A shared background app-server started earlier would not see these per-process overrides.
        args.push("--no-daemon");
        for (const [name, url] of mcpEntries(router)) {
          args.push(
            "-c",
            `mcp_servers.${name}.url=${toml(url)}`,
            "-c",
            `mcp_servers.${name}.bearer_token_env_var=${toml(TOKEN_ENV)}`,
          );
        }
        if (router.knowledge !== false) {
          args.push("-c", `developer_instructions=${toml(KNOWLEDGE_POLICY)}`);
          // Codex calls `notify` after each turn with a JSON argument: the hook records it as an observation.
          args.push("-c", `notify=[${[...input.hookCommand, "hook", "codex"].map(toml).join(",")}]`);
        }
      }
      return { args, env: {}, files: [] };
    }
    case "claude": {
      if (!router) return { args: [], env: {}, files: [] };
      const server = (url: string) => ({
        type: "http",
        url,
        headers: { Authorization: `Bearer \${${TOKEN_ENV}}` },
      });
      const mcpConfig = {
        mcpServers: Object.fromEntries(mcpEntries(router).map(([name, url]) => [name, server(url)])),
      };
      if (router.knowledge === false) {
        return {
          args: ["--mcp-config", `${input.runtimeDir}/mcp.json`],
          env: {},
          files: [{ name: "mcp.json", content: JSON.stringify(mcpConfig, null, 2) }],
        };
      }
      const hook = (event: string) => [
        {
          hooks: [
            {
              type: "command",
              command: [...input.hookCommand, "hook", "claude", event].map(shellQuote).join(" "),
              timeout: 5,
            },
          ],
        },
      ];
      const settings = {
        hooks: {
          SessionStart: hook("session_start"),
          UserPromptSubmit: hook("prompt_submitted"),
          PostToolUse: hook("tool_used"),
          Stop: hook("session_end"),
        },
        // The statusline payload is the only place Claude reports its quota percentages: AUTO's quota store.
        statusLine: {
          type: "command",
          command: [...input.hookCommand, "hook", "statusline"].map(shellQuote).join(" "),
        },
      };
      return {
        args: [
          "--mcp-config",
          `${input.runtimeDir}/mcp.json`,
          "--settings",
          `${input.runtimeDir}/settings.json`,
          "--append-system-prompt",
          KNOWLEDGE_POLICY,
        ],
        env: {},
        files: [
          { name: "mcp.json", content: JSON.stringify(mcpConfig, null, 2) },
          { name: "settings.json", content: JSON.stringify(settings, null, 2) },
        ],
      };
    }
    case "opencode": {
      if (!router) return { args: [], env: {}, files: [] };
      const remote = (url: string) => ({
        type: "remote",
        url,
        enabled: true,
        headers: { Authorization: `Bearer {env:${TOKEN_ENV}}` },
      });
      const mcp = Object.fromEntries(mcpEntries(router).map(([name, url]) => [name, remote(url)]));
      if (router.knowledge === false) {
        return { args: [], env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ mcp }) }, files: [] };
      }
      const config = { mcp, instructions: [`${input.runtimeDir}/ivoai-policy.md`] };
      return {
        args: [],
        env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
        files: [{ name: "ivoai-policy.md", content: `${KNOWLEDGE_POLICY}\n` }],
      };
    }
  }
}
