// The client's config.toml: non-secret settings and server profiles. Fields ivoai does not know are kept
// when it rewrites the file (the raw document is edited, not re-serialised from the typed view).

import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { z } from "zod";
import { IvoaiError } from "../shared/errors.js";
import { LEGACY_SERVER_ID } from "./secrets.js";
import { parseUserServers, renderUserServers, type UserServer } from "./user-mcp.js";

/** An absolute path on the server's own origin: never "//host", "@host" or a scheme that would move it. */
export const endpointPath = z
  .string()
  .regex(/^\/(?!\/)[A-Za-z0-9._~/-]*$/, "must be a path on the server's own origin");

/** The full URL of a profile's endpoint, checked to stay on the profile's origin (its credential goes there). */
export function endpointUrl(
  profile: { url: string; endpoints: Record<string, string> },
  name: string,
): string {
  const full = `${profile.url}${profile.endpoints[name] ?? ""}`;
  if (!endpointPath.safeParse(profile.endpoints[name]).success || new URL(full).origin !== profile.url) {
    throw new IvoaiError("CONFIG_INVALID", `endpoint ${name} of ${profile.url} leaves its origin`);
  }
  return full;
}

export const serverProfileSchema = z.object({
  alias: z.string(),
  url: z.string(),
  purpose: z.string(),
  redundancy_group: z.string().optional(),
  priority: z.number().int().default(100),
  enabled: z.boolean().default(true),
  protocol_version: z.number().int().default(1),
  server_version: z.string().optional(),
  client_id: z.string().optional(),
  added_at: z.string().optional(),
  endpoints: z
    .object({
      context: endpointPath.default("/v1/mcp/context"),
      memory: endpointPath.default("/v1/memory/mcp"),
      hooks: endpointPath.default("/v1/memory"),
    })
    .prefault({}),
  features: z.record(z.string(), z.boolean()).default({}),
});

export type ServerProfile = z.infer<typeof serverProfileSchema> & { id: string };

export interface ClientConfigDocument {
  /** The whole TOML document, unknown fields included. */
  raw: Record<string, unknown>;
  profiles: ServerProfile[];
  /** The user's own MCP servers (`[mcp_servers.NAME]`). */
  userServers: UserServer[];
  /** True when a legacy single-server layout was normalised. */
  migrated: boolean;
}

export function parseClientConfig(text: string, file: string): ClientConfigDocument {
  let raw: Record<string, unknown>;
  try {
    raw = text.trim() === "" ? {} : (parseToml(text) as Record<string, unknown>);
  } catch (error) {
    throw new IvoaiError(
      "CONFIG_INVALID",
      `${file} is not valid TOML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  let migrated = false;
  // Legacy single-server layout: [server] url = … becomes the stable profile "default".
  const legacy = raw.server;
  const servers = { ...((raw.servers as Record<string, unknown> | undefined) ?? {}) };
  if (isLegacySection(legacy) && !servers[LEGACY_SERVER_ID]) {
    servers[LEGACY_SERVER_ID] = { alias: "default", purpose: "default", ...legacy };
    raw = { ...raw, servers };
    migrated = true;
  }
  const profiles: ServerProfile[] = [];
  for (const [id, value] of Object.entries(servers)) {
    const parsed = serverProfileSchema.safeParse(value);
    if (!parsed.success) {
      throw new IvoaiError("CONFIG_INVALID", `${file}: servers.${id}: ${parsed.error.issues[0]?.message}`);
    }
    profiles.push({ id, ...parsed.data });
  }
  profiles.sort((a, b) => a.alias.localeCompare(b.alias));
  const userServers = parseUserServers(raw.mcp_servers, file);
  for (const server of userServers) {
    if (profiles.some((profile) => profile.alias === server.name)) {
      throw new IvoaiError(
        "CONFIG_INVALID",
        `${file}: mcp_servers.${server.name} has an ivoai server's alias`,
      );
    }
  }
  return { raw, profiles, userServers, migrated };
}

/**
 * Serialises the document with `profiles` replacing the servers table (and `userServers`, when given, the
 * mcp_servers table); every other field is kept as read.
 */
export function renderClientConfig(
  doc: ClientConfigDocument,
  profiles: readonly ServerProfile[],
  userServers?: readonly UserServer[],
): string {
  const previous = (doc.raw.servers as Record<string, Record<string, unknown>> | undefined) ?? {};
  const servers: Record<string, unknown> = {};
  for (const { id, ...profile } of profiles) {
    // Keep unknown keys of an existing profile too.
    servers[id] = { ...(previous[id] ?? {}), ...dropUndefined(profile) };
  }
  const { servers: _old, mcp_servers: oldUser, ...rest } = doc.raw;
  const previousUser = oldUser as Record<string, Record<string, unknown>> | undefined;
  const users = userServers ? renderUserServers(previousUser, userServers) : previousUser;
  if (users && Object.keys(users).length > 0) rest.mcp_servers = users;
  // The legacy [server] table is the legacy profile: once that profile is gone it must not come back.
  if (isLegacySection(rest.server) && !profiles.some((profile) => profile.id === LEGACY_SERVER_ID))
    delete rest.server;
  return `# ivoai client settings (non-secret). Credentials live in secrets.json (0600).\n${stringifyToml({ schema: 1, ...rest, servers })}`;
}

function isLegacySection(value: unknown): value is Record<string, unknown> & { url: string } {
  return typeof value === "object" && value !== null && typeof (value as { url?: unknown }).url === "string";
}

function dropUndefined(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined));
}
