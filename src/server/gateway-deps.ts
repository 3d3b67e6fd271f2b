// What the gateway app is built from: the composition root (start.ts) opens these and every sub-app takes its part.
import type { ServerConfig } from "../config/server-config.js";
import type { ServerPaths } from "../config/server-paths.js";
import type { Logger } from "../shared/logger.js";
import type { AuditLog } from "./audit/store.js";
import type { ConsoleSite } from "./console/static-site.js";
import type { ConsoleStore } from "./console/store.js";
import type { ContextService } from "./context/service.js";
import type { EnrollmentService } from "./enrollment/service.js";
import type { ReadinessCheck } from "./health/readiness.js";
import type { ListenerMode } from "./http/listener-policy.js";
import type { MemoryService } from "./memory/service.js";
import type { OAuthStore } from "./oauth/store.js";

export interface GatewayAppDeps {
  config: ServerConfig;
  paths: ServerPaths;
  enrollment: EnrollmentService;
  logger: Logger;
  listenerMode: ListenerMode;
  /** The host the listener is bound to (default: the configured listen address's). */
  listenHost?: string;
  /** The public base URL clients see (may follow the bound port for a loopback port-0 demo). */
  publicUrl: () => string;
  readiness: readonly ReadinessCheck[];
  /** The context service, when this process serves it. */
  context?: ContextService;
  /** The memory service; null when it could not be opened (memory routes answer 503, the server runs degraded). */
  memory?: MemoryService | null;
  /** Where tool calls and decisions are recorded. */
  audit?: AuditLog;
  /** OAuth state; with it the gateway serves Web MCP (/mcp) and its authorization server. */
  oauth?: OAuthStore;
  /** Web console sign-in state; with it the console's session cookie authenticates the console's API. */
  console?: ConsoleStore;
  /** The console's static files (default: the bundled ones, else dist/console of a checkout). */
  consoleSite?: ConsoleSite;
  startedAt?: Date;
  now?: () => Date;
}

/** The deps with their defaults resolved once: the clock, and the start time the status routes report. */
export interface ResolvedGatewayDeps extends GatewayAppDeps {
  now: () => Date;
  startedAt: Date;
}

export function resolveGatewayDeps(deps: GatewayAppDeps): ResolvedGatewayDeps {
  const now = deps.now ?? (() => new Date());
  return { ...deps, now, startedAt: deps.startedAt ?? now() };
}
