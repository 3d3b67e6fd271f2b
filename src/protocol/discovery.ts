// The protocol-1 discovery document served at /.well-known/ivoai (seed 000, "Protocolo versão 1").
import { z } from "zod";

export const PROTOCOL_VERSION = 1;

export const discoveryFeaturesSchema = z.object({
  context: z.boolean(),
  memory: z.boolean(),
  memory_hooks: z.boolean(),
  web_mcp: z.boolean(),
  oauth_pkce: z.boolean(),
  remote_admin_read_only: z.boolean(),
  /** The web console at /console (people sign in with `ivoai server console login`). */
  web_console: z.boolean().default(false),
});

export const discoveryDocumentSchema = z.object({
  protocol_version: z.number().int().positive(),
  server_version: z.string(),
  public_base_url: z.string().url(),
  health_endpoint: z.string(),
  ready_endpoint: z.string(),
  enrollment_endpoint: z.string(),
  context_mcp_endpoint: z.string(),
  memory_mcp_endpoint: z.string(),
  memory_hooks_endpoint: z.string(),
  web_mcp_endpoint: z.string(),
  oauth_authorization_server_metadata: z.string(),
  features: discoveryFeaturesSchema,
});

export type DiscoveryFeatures = z.infer<typeof discoveryFeaturesSchema>;
export type DiscoveryDocument = z.infer<typeof discoveryDocumentSchema>;

export const ENDPOINTS = {
  discovery: "/.well-known/ivoai",
  health: "/health",
  ready: "/ready",
  enroll: "/v1/enroll",
  contextMcp: "/v1/mcp/context",
  memoryMcp: "/v1/memory/mcp",
  memoryHooks: "/v1/memory",
  webMcp: "/mcp",
  oauthMetadata: "/.well-known/oauth-authorization-server",
  adminStatus: "/v1/admin/status",
  adminDoctor: "/v1/admin/doctor",
  adminConnectors: "/v1/admin/connectors",
} as const;

export function buildDiscoveryDocument(input: {
  serverVersion: string;
  publicBaseUrl: string;
  features: DiscoveryFeatures;
}): DiscoveryDocument {
  return {
    protocol_version: PROTOCOL_VERSION,
    server_version: input.serverVersion,
    public_base_url: input.publicBaseUrl,
    health_endpoint: ENDPOINTS.health,
    ready_endpoint: ENDPOINTS.ready,
    enrollment_endpoint: ENDPOINTS.enroll,
    context_mcp_endpoint: ENDPOINTS.contextMcp,
    memory_mcp_endpoint: ENDPOINTS.memoryMcp,
    memory_hooks_endpoint: ENDPOINTS.memoryHooks,
    web_mcp_endpoint: ENDPOINTS.webMcp,
    oauth_authorization_server_metadata: ENDPOINTS.oauthMetadata,
    features: input.features,
  };
}
