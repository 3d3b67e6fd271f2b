// The user's own MCP servers, `[mcp_servers.NAME]` in the client's config.toml beside ivoai's servers (seed 000:
// one registry for both). Non-secret fields only: header and environment values live in secrets.json.
import { z } from "zod";
import { IvoaiError } from "../shared/errors.js";

/** Names beginning with "ivoai" are ivoai's own (ivoai-memory, ivoai-context in every agent). */
export const USER_SERVER_NAME = /^(?!ivoai)[a-z][a-z0-9_-]{0,31}$/;
const toolName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "must be an MCP tool name");
const secretKey = z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/, "must be a header or variable name");

const common = {
  enabled: z.boolean().default(true),
  /** Only a server marked read-only may be given to AUTO's read-only workers. */
  read_only: z.boolean().default(false),
  /** Doctor fails (exit 1) when a required server does not answer. */
  required: z.boolean().default(false),
  /** The tools agents see; absent means every tool the server lists. */
  tools: z.array(toolName).optional(),
  /** Prepended to each tool's name as agents see it (`PREFIX_tool`). */
  prefix: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,15}$/, "must be lower-case letters, digits or _")
    .optional(),
  /** Names (never values) of the secrets stored for this server, so list/show can say what is stored. */
  secret_headers: z.array(secretKey).default([]),
  secret_env: z.array(secretKey).default([]),
  added_at: z.string().optional(),
};

export const userServerSchema = z.union([
  z.object({
    transport: z.literal("stdio"),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    cwd: z.string().optional(),
    ...common,
  }),
  z.object({
    transport: z.literal("http"),
    url: z
      .string()
      .refine((value) => /^https?:\/\//.test(value) && URL.canParse(value), "must be an http(s) URL"),
    ...common,
  }),
]);

export type UserServerConfig = z.infer<typeof userServerSchema>;
export type UserServer = UserServerConfig & { name: string };

/** The `[mcp_servers]` table of a parsed config.toml, checked; names sorted. */
export function parseUserServers(raw: unknown, file: string): UserServer[] {
  if (raw === undefined) return [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new IvoaiError("CONFIG_INVALID", `${file}: mcp_servers must be a table`);
  }
  const servers: UserServer[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (!USER_SERVER_NAME.test(name)) {
      throw new IvoaiError("CONFIG_INVALID", `${file}: mcp_servers.${name}: ${NAME_RULE}`);
    }
    const parsed = userServerSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
      throw new IvoaiError("CONFIG_INVALID", `${file}: mcp_servers.${name}${where}: ${issue?.message}`);
    }
    servers.push({ name, ...parsed.data });
  }
  return servers.sort((a, b) => a.name.localeCompare(b.name));
}

export const NAME_RULE =
  'a server name is a lower-case letter then up to 31 letters, digits, - or _, and does not begin with "ivoai"';

const KNOWN_KEYS = new Set(["transport", "command", "args", "cwd", "url", ...Object.keys(common)]);

/** The table as config.toml stores it (unknown keys of an existing entry kept). */
export function renderUserServers(
  previous: Record<string, Record<string, unknown>> | undefined,
  servers: readonly UserServer[],
): Record<string, unknown> {
  const table: Record<string, unknown> = {};
  for (const { name, ...server } of servers) {
    const entry = Object.fromEntries(Object.entries(server).filter(([, value]) => value !== undefined));
    const unknown = Object.entries(previous?.[name] ?? {}).filter(([key]) => !KNOWN_KEYS.has(key));
    table[name] = { ...Object.fromEntries(unknown), ...entry };
  }
  return table;
}
