// Connecting a server: checks that the profile can be saved, discovery (valid TLS, no cross-origin redirect,
// protocol 1, healthy or degraded), enrollment, persistence, and only then the context/memory probes.
import { hostname } from "node:os";
import { z } from "zod";
import { endpointPath, endpointUrl, type ServerProfile } from "../../config/client-config.js";
import { type DiscoveryDocument, discoveryDocumentSchema, ENDPOINTS } from "../../protocol/discovery.js";
import { IvoaiError } from "../../shared/errors.js";
import { isLoopbackHost } from "../../shared/loopback.js";
import { safeFetch } from "../../shared/safe-fetch.js";
import { newId } from "../../shared/tokens.js";
import { connectMcp } from "./mcp-client.js";
import type { ConnectionRegistry } from "./registry.js";

const DISCOVERY_LIMIT = 1024 * 1024;
const TIMEOUT_MS = 10_000;

export interface Discovered {
  origin: string;
  discovery: DiscoveryDocument;
  readiness: "ready" | "ready_degraded";
  degraded: string[];
}

/** https://host[:port] (http only on loopback), no path, no credentials in the URL. */
export function normalizeServerUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new IvoaiError("USAGE", `invalid server URL '${text}'`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new IvoaiError("USAGE", "server URLs must use https (plain http only on loopback)");
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new IvoaiError("USAGE", "server URLs carry no credentials, query or fragment");
  }
  return url.origin;
}

async function getJson(url: string, timeoutMs = TIMEOUT_MS): Promise<{ status: number; body: unknown }> {
  const response = await safeFetch(
    url,
    { headers: { accept: "application/json" } },
    {
      timeoutMs,
      maxResponseBytes: DISCOVERY_LIMIT,
    },
  );
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new IvoaiError("NETWORK", `${url} did not answer JSON`);
  }
  return { status: response.status, body };
}

export async function discover(serverUrl: string, timeoutMs = TIMEOUT_MS): Promise<Discovered> {
  const origin = normalizeServerUrl(serverUrl);
  const { status, body } = await getJson(`${origin}${ENDPOINTS.discovery}`, timeoutMs);
  if (status !== 200)
    throw new IvoaiError("NETWORK", `${origin} is not an ivoai server (discovery answered ${status})`);
  const parsed = discoveryDocumentSchema.safeParse(body);
  if (!parsed.success) throw new IvoaiError("NETWORK", `${origin} sent a malformed discovery document`);
  for (const name of [
    "enrollment_endpoint",
    "context_mcp_endpoint",
    "memory_mcp_endpoint",
    "memory_hooks_endpoint",
    "ready_endpoint",
  ] as const) {
    if (!endpointPath.safeParse(parsed.data[name]).success) {
      throw new IvoaiError("NETWORK", `${origin} advertises ${name} outside its own origin`);
    }
  }
  if (parsed.data.protocol_version !== 1) {
    throw new IvoaiError(
      "CONFLICT",
      `${origin} speaks protocol ${parsed.data.protocol_version}; this ivoai speaks 1`,
    );
  }
  const ready = await getJson(`${origin}${parsed.data.ready_endpoint}`, timeoutMs);
  const readyBody = z
    .object({ status: z.string(), degraded: z.array(z.string()).default([]) })
    .safeParse(ready.body);
  const state = readyBody.success ? readyBody.data.status : "unknown";
  if (ready.status !== 200 || (state !== "ready" && state !== "ready_degraded")) {
    throw new IvoaiError("NETWORK", `${origin} is not ready (${state})`);
  }
  return {
    origin,
    discovery: parsed.data,
    readiness: state,
    degraded: readyBody.success ? readyBody.data.degraded : [],
  };
}

export interface AddServerInput {
  alias: string;
  url: string;
  /** Default: see `defaultPurpose`. */
  purpose?: string;
  redundancyGroup?: string;
  priority?: number;
  code: string;
}

export interface AddServerResult {
  profile: ServerProfile;
  warnings: string[];
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * A server's own knowledge domain unless told otherwise (purposes never mix, seed 001): the purpose its
 * redundancy group's members already have, else the group's name, else the alias.
 */
export function defaultPurpose(
  profiles: readonly ServerProfile[],
  input: Pick<AddServerInput, "alias" | "redundancyGroup">,
): string {
  if (!input.redundancyGroup) return input.alias;
  const member = profiles.find((profile) => profile.redundancy_group === input.redundancyGroup);
  return member?.purpose ?? input.redundancyGroup;
}

function assertNames(input: AddServerInput): void {
  for (const [flag, value] of [
    ["alias", input.alias],
    ["--purpose", input.purpose],
    ["--redundancy-group", input.redundancyGroup],
  ] as const) {
    if (value !== undefined && !NAME.test(value)) {
      throw new IvoaiError(
        "USAGE",
        `invalid ${flag} '${value}': lowercase letters, digits, '.', '_' and '-'`,
      );
    }
  }
}

function assertAliasFree(profiles: readonly ServerProfile[], alias: string): void {
  if (profiles.some((profile) => profile.alias === alias)) {
    throw new IvoaiError("CONFLICT", `a server named ${alias} is already connected`);
  }
}

export async function addServer(
  registry: ConnectionRegistry,
  input: AddServerInput,
): Promise<AddServerResult> {
  assertNames(input);
  const code = input.code.trim();
  if (!code) throw new IvoaiError("USAGE", "the enrollment code is empty");
  // Everything that could refuse the profile is checked before the single-use code is spent.
  let purpose = input.purpose ?? input.alias;
  await registry.assertWritable(({ profiles }) => {
    assertAliasFree(profiles, input.alias);
    purpose = input.purpose ?? defaultPurpose(profiles, input);
  });
  const found = await discover(input.url);
  const enroll = await safeFetch(
    `${found.origin}${found.discovery.enrollment_endpoint}`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code, client_name: `ivoai@${hostname()}` }),
    },
    { timeoutMs: TIMEOUT_MS, maxResponseBytes: DISCOVERY_LIMIT },
  );
  const enrolled = z
    .object({ client_id: z.string(), credential: z.string().min(20), scopes: z.array(z.string()) })
    .safeParse(await enroll.json().catch(() => undefined));
  if (enroll.status === 429)
    throw new IvoaiError("NETWORK", `${found.origin} is rate-limiting enrollment; try later`);
  if (!enroll.ok || !enrolled.success) {
    throw new IvoaiError(
      "CONFLICT",
      `${found.origin} refused the enrollment code (invalid, expired or already used)`,
    );
  }
  const profile: ServerProfile = {
    id: newId("srv_"),
    alias: input.alias,
    url: found.origin,
    purpose,
    ...(input.redundancyGroup ? { redundancy_group: input.redundancyGroup } : {}),
    priority: input.priority ?? 100,
    enabled: true,
    protocol_version: found.discovery.protocol_version,
    server_version: found.discovery.server_version,
    client_id: enrolled.data.client_id,
    added_at: new Date().toISOString(),
    endpoints: {
      context: found.discovery.context_mcp_endpoint,
      memory: found.discovery.memory_mcp_endpoint,
      hooks: found.discovery.memory_hooks_endpoint,
    },
    features: found.discovery.features,
  };
  // Persist before any probe: the code is spent, the credential must not be lost.
  await registry.update((state) => {
    assertAliasFree(state.profiles, profile.alias);
    state.profiles.push(profile);
    state.secrets.servers[profile.id] = { credential: enrolled.data.credential };
  });
  const warnings = found.degraded.map((name) => `server reports ${name} degraded`);
  warnings.push(...(await probe(profile, enrolled.data.credential)));
  return { profile, warnings };
}

/** Lists the tools of the context and memory endpoints the server advertises; failures become warnings. */
export async function probe(profile: ServerProfile, token: string): Promise<string[]> {
  const warnings: string[] = [];
  for (const name of ["context", "memory"] as const) {
    if (profile.features[name] === false) continue;
    try {
      const client = await connectMcp({
        url: endpointUrl(profile, name),
        token,
        timeoutMs: 5_000,
        maxResponseBytes: DISCOVERY_LIMIT,
      });
      try {
        const { tools } = await client.listTools(undefined, { timeout: 5_000 });
        if (tools.length === 0) warnings.push(`${name}: no tools are available to this credential`);
      } finally {
        await client.close();
      }
    } catch (error) {
      warnings.push(`${name} probe failed: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  return warnings;
}
