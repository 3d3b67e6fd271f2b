// Which of ivoai's knowledge tools each MCP server offers, and which a read-only worker may call: read from
// the one tool table in protocol/, so a new tool gets its tier in one place.
import { TOOL_NAMES, TOOLS, type ToolName } from "../../../protocol/tools.js";
import { IvoaiError } from "../../../shared/errors.js";

export const KNOWLEDGE_SERVERS = ["ivoai-memory", "ivoai-context"] as const;
export type KnowledgeServer = (typeof KNOWLEDGE_SERVERS)[number];

const PREFIX: Record<KnowledgeServer, string> = { "ivoai-memory": "memory_", "ivoai-context": "context_" };

/** Every tool the server exposes. */
export function serverTools(server: KnowledgeServer): ToolName[] {
  return TOOL_NAMES.filter((name) => name.startsWith(PREFIX[server]));
}

/** The read-tier tools of the server: all a worker may call. */
export function readTools(server: KnowledgeServer): ToolName[] {
  return serverTools(server).filter((name) => TOOLS[name].tier === "read");
}

/** The tools of the server that change state: refused to workers. */
export function mutationTools(server: KnowledgeServer): ToolName[] {
  return serverTools(server).filter((name) => TOOLS[name].tier !== "read");
}

/** The server's endpoint in the knowledge access. */
export function endpointOf(server: KnowledgeServer, endpoints: { memory: string; context: string }): string {
  return server === "ivoai-memory" ? endpoints.memory : endpoints.context;
}

/** MCP server names become config keys (codex's dotted TOML paths, claude's tool prefixes). */
export function assertServerName(name: string): void {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
    throw new IvoaiError("CONFIG_INVALID", `invalid MCP server name ${JSON.stringify(name)}`);
}

/** The user MCP servers a turn is given: all for the primary, only those marked read-only for a worker. */
export function userServersFor(
  role: "primary" | "worker",
  knowledge: { user?: readonly { name: string; url: string; read_only: boolean }[] },
): { name: string; url: string }[] {
  return (knowledge.user ?? []).filter((server) => role === "primary" || server.read_only);
}
