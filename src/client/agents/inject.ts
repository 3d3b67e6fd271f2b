// How each official CLI receives the session's router endpoints, per process: structured argv, environment
// variable names for the capability (never the value in argv), and private runtime files.

import { shellQuote } from "../../shared/shell-quote.js";
import type { AgentName } from "./catalog.js";
import { KNOWLEDGE_POLICY } from "./policy.js";

export const TOKEN_ENV = "IVOAI_ROUTER_TOKEN";

export interface RouterView {
  endpoints: { context: string; memory: string; hooks: string };
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
        for (const [name, url] of [
          ["ivoai-memory", router.endpoints.memory],
          ["ivoai-context", router.endpoints.context],
        ] as const) {
          args.push(
            "-c",
            `mcp_servers.${name}.url=${toml(url)}`,
            "-c",
            `mcp_servers.${name}.bearer_token_env_var=${toml(TOKEN_ENV)}`,
          );
        }
        args.push("-c", `developer_instructions=${toml(KNOWLEDGE_POLICY)}`);
        // Codex calls `notify` after each turn with a JSON argument: the hook records it as an observation.
        args.push("-c", `notify=[${[...input.hookCommand, "hook", "codex"].map(toml).join(",")}]`);
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
        mcpServers: {
          "ivoai-memory": server(router.endpoints.memory),
          "ivoai-context": server(router.endpoints.context),
        },
      };
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
      const config = {
        mcp: {
          "ivoai-memory": remote(router.endpoints.memory),
          "ivoai-context": remote(router.endpoints.context),
        },
        instructions: [`${input.runtimeDir}/ivoai-policy.md`],
      };
      return {
        args: [],
        env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
        files: [{ name: "ivoai-policy.md", content: `${KNOWLEDGE_POLICY}\n` }],
      };
    }
  }
}
