// The user's MCP servers as a launch, the router, `mcp test` and doctor use them: each server's config with its
// secret values merged in memory (never written anywhere but secrets.json, never put in argv).
import type { UserServerSecrets } from "../../config/secrets.js";
import { NAME_RULE, USER_SERVER_NAME, type UserServer } from "../../config/user-mcp.js";
import { IvoaiError } from "../../shared/errors.js";
import type { ConnectionRegistry, RegistrySnapshot } from "./registry.js";

/** A user server with its secrets: HTTP header values, or environment values for a stdio server's process. */
export type ResolvedUserServer = UserServer & { secrets: UserServerSecrets };

export function resolveUserServer(snapshot: RegistrySnapshot, name: string): ResolvedUserServer {
  const server = snapshot.userServers.find((entry) => entry.name === name);
  if (!server) {
    const hint = USER_SERVER_NAME.test(name) ? "" : ` (${NAME_RULE})`;
    throw new IvoaiError("NOT_FOUND", `no MCP server named ${name}${hint}; see 'ivoai mcp list'`);
  }
  const stored = snapshot.secrets.mcp_servers?.[name];
  return { ...server, secrets: { headers: { ...stored?.headers }, env: { ...stored?.env } } };
}

/** Every enabled user server, resolved; `readOnlyOnly` keeps the ones marked read-only (AUTO's workers). */
export async function enabledUserServers(
  registry: Pick<ConnectionRegistry, "read">,
  options: { readOnlyOnly?: boolean } = {},
): Promise<ResolvedUserServer[]> {
  const snapshot = await registry.read();
  return snapshot.userServers
    .filter((server) => server.enabled && (!options.readOnlyOnly || server.read_only))
    .map((server) => resolveUserServer(snapshot, server.name));
}

/** The tool name agents see for a user server's tool (its prefix, when set, then `_`). */
export function exposedToolName(server: Pick<UserServer, "prefix">, tool: string): string {
  return server.prefix ? `${server.prefix}_${tool}` : tool;
}

/** Whether the allow-list lets agents see `tool` (no list: every tool). */
export function toolAllowed(server: Pick<UserServer, "tools">, tool: string): boolean {
  return server.tools === undefined || server.tools.includes(tool);
}
