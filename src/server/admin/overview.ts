// GET /v1/admin/overview (status:read): the console's first screen in one answer — versions, uptime,
// readiness, counts and every connector's last ingest (newest first).
import { Hono } from "hono";
import type { LastIngest, Overview } from "../../protocol/console-api.js";
import { PROTOCOL_VERSION } from "../../protocol/discovery.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { ContextService } from "../context/service.js";
import type { EnrollmentService } from "../enrollment/service.js";
import { evaluateReadiness, type ReadinessCheck } from "../health/readiness.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import type { MemoryStore } from "../memory/store.js";
import type { OAuthStore } from "../oauth/store.js";

export interface OverviewDeps {
  enrollment: EnrollmentService;
  readiness: readonly ReadinessCheck[];
  context?: ContextService | undefined;
  memory?: MemoryStore | undefined;
  oauth?: OAuthStore | undefined;
  startedAt: Date;
  now: () => Date;
}

export function createOverviewRoutes(deps: OverviewDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/overview", requireScope("status:read"), async (c) => {
    const now = deps.now();
    const [report, clients, catalogue, connectors, memory] = await Promise.all([
      evaluateReadiness(deps.readiness),
      deps.enrollment.listClients(),
      deps.context?.catalogue.stats(),
      deps.context?.catalogue.listConnectors() ?? [],
      // Memory failing is already a degraded readiness check; the counts then say 0.
      deps.memory?.stats().catch(() => undefined),
    ]);
    const ingests: (LastIngest & { connector: string })[] = [];
    for (const connector of connectors) {
      if (connector.last_ingest) ingests.push({ ...connector.last_ingest, connector: connector.name });
    }
    ingests.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : a.connector.localeCompare(b.connector)));
    const overview: Overview = {
      server_version: IVOAI_VERSION,
      protocol_version: String(PROTOCOL_VERSION),
      started_at: deps.startedAt.toISOString(),
      uptime_seconds: Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000),
      ready: {
        // /ready says ready_degraded; the console's contract names it degraded.
        status: report.status === "ready_degraded" ? "degraded" : report.status,
        degraded: report.degraded,
        failed: report.failed,
      },
      counts: {
        clients_active: clients.filter((client) => !client.revoked_at).length,
        oauth_clients_active: ((await deps.oauth?.listClients()) ?? []).filter((client) => !client.revoked_at)
          .length,
        documents: catalogue?.documents ?? 0,
        chunks: catalogue?.chunks ?? 0,
        pages: memory?.pages ?? 0,
        pending_approvals: memory?.pending_approvals ?? 0,
      },
      last_ingest: ingests[0] ?? null,
      ingests,
    };
    return c.json(overview);
  });
  return app;
}
