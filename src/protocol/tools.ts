// The one table of ivoai MCP tools: name, security tier, required scope and whether web assistants get it.
// The server's tool definitions, the Web MCP allow-list, the knowledge policy and the session router read it.
import type { Scope } from "./scopes.js";
import type { SecurityTier } from "./tool-envelope.js";

export interface ToolEntry {
  /** read runs at once; write and admin only propose, through the approval gate. */
  tier: SecurityTier;
  /** The credential scope a caller needs to see and call the tool. */
  scope: Scope;
  /** Offered to ChatGPT / Claude web through Web MCP (/mcp). */
  web: boolean;
}

export const TOOLS = {
  context_search: { tier: "read", scope: "context:read", web: true },
  context_get_document: { tier: "read", scope: "context:read", web: true },
  context_recent: { tier: "read", scope: "context:read", web: true },
  context_health: { tier: "read", scope: "context:read", web: true },
  memory_query: { tier: "read", scope: "memory:read", web: true },
  memory_recent: { tier: "read", scope: "memory:read", web: true },
  memory_read_page: { tier: "read", scope: "memory:read", web: true },
  memory_status: { tier: "read", scope: "memory:read", web: true },
  memory_approval_status: { tier: "read", scope: "memory:read", web: true },
  memory_episodes: { tier: "read", scope: "memory:read", web: false },
  memory_write_page: { tier: "write", scope: "memory:write", web: true },
  memory_feedback: { tier: "write", scope: "memory:write", web: true },
  memory_promote_episode: { tier: "write", scope: "memory:write", web: false },
  memory_delete_page: { tier: "write", scope: "memory:delete", web: true },
} as const satisfies Record<string, ToolEntry>;

export type ToolTable = typeof TOOLS;
export type ToolName = keyof ToolTable;

/** Every tool name, in table order. */
export const TOOL_NAMES = Object.keys(TOOLS) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(TOOLS, name);
}

/** The table entry of a known tool, or undefined for a name ivoai does not define. */
export function toolEntry(name: string): ToolEntry | undefined {
  return isToolName(name) ? TOOLS[name] : undefined;
}

/** Tools that change state (tier write or admin): one destination, never retried, always approved. */
export const WRITE_TOOL_NAMES: readonly ToolName[] = TOOL_NAMES.filter((name) => TOOLS[name].tier !== "read");

/** The narrower tool set web assistants get (seed 000, "Web MCP e OAuth"). */
export const WEB_TOOL_NAMES: readonly ToolName[] = TOOL_NAMES.filter((name) => TOOLS[name].web);
