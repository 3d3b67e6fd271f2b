// secrets.json (0600, in the 0700 config dir): credentials keyed by opaque server id, schema 2, with the
// seed's reversible migration from the legacy single-server schema 1.
import { z } from "zod";

export const LEGACY_SERVER_ID = "srv_legacy_default";

const credentialSchema = z.object({ credential: z.string().min(1) });

/** The secret values of one user MCP server: HTTP header values, stdio environment values. */
const userServerSecretsSchema = z.object({
  headers: z.record(z.string(), z.string()).default({}),
  env: z.record(z.string(), z.string()).default({}),
});
export type UserServerSecrets = z.infer<typeof userServerSecretsSchema>;

export const secretsV2Schema = z.object({
  schema: z.literal(2),
  servers: z.record(z.string(), credentialSchema),
  /** Keyed by user MCP server name (`[mcp_servers.NAME]`); optional so earlier files stay valid. */
  mcp_servers: z.record(z.string(), userServerSecretsSchema).optional(),
  /** Mirror of the legacy credential, kept only for the default profile so a rollback to schema 1 works. */
  server: credentialSchema.optional(),
});

export const secretsV1Schema = z.object({
  schema: z.literal(1).optional(),
  server: credentialSchema,
});

export type SecretsV2 = z.infer<typeof secretsV2Schema>;
export type SecretsV1 = z.infer<typeof secretsV1Schema>;

export function emptySecrets(): SecretsV2 {
  return { schema: 2, servers: {} };
}

/** 1 → 2: the legacy credential becomes srv_legacy_default; the mirror stays for rollback. */
export function migrateSecretsUp(v1: SecretsV1): SecretsV2 {
  return { schema: 2, servers: { [LEGACY_SERVER_ID]: { ...v1.server } }, server: { ...v1.server } };
}

/** 2 → 1: only possible while the default profile's credential is present. */
export function migrateSecretsDown(v2: SecretsV2): SecretsV1 {
  const legacy = v2.servers[LEGACY_SERVER_ID] ?? v2.server;
  if (!legacy) throw new Error("no default profile credential to roll back to");
  return { schema: 1, server: { ...legacy } };
}

/** Parses either schema, migrating 1 to 2. */
export function parseSecrets(raw: unknown): { secrets: SecretsV2; migrated: boolean } {
  const v2 = secretsV2Schema.safeParse(raw);
  if (v2.success) return { secrets: v2.data, migrated: false };
  const v1 = secretsV1Schema.safeParse(raw);
  if (v1.success) return { secrets: migrateSecretsUp(v1.data), migrated: true };
  throw new Error("secrets.json matches neither schema 1 nor schema 2");
}
