// Read-only remote administration as a typed allow-list: status, doctor, connectors. No command, path or shell.
import { Hono } from "hono";
import type { ServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { PROTOCOL_VERSION } from "../../protocol/discovery.js";
import { IVOAI_VERSION } from "../../shared/version.js";
import type { VectorRetriever } from "../context/vectors.js";
import type { EnrollmentService } from "../enrollment/service.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import type { ListenerMode } from "../http/listener-policy.js";
import type { MemoryVectors } from "../memory/vectors.js";
import { SQL_STORES } from "../stores.js";
import { runServerDoctor } from "./doctor.js";

export interface AdminRoutesDeps {
  config: ServerConfig;
  paths: ServerPaths;
  enrollment: EnrollmentService;
  listenerMode: ListenerMode;
  startedAt: Date;
  now: () => Date;
  /** Connector summaries; empty until a context service is mounted. */
  listConnectors: () => Promise<unknown[]>;
  /** The context service's vector index, for doctor's embedder line. */
  vectors?: VectorRetriever | undefined;
  /** The memory service as doctor's memory_ranking line sees it, when memory is configured. */
  memory?: { open: boolean; vectors: MemoryVectors | undefined };
}

export function createAdminRoutes(deps: AdminRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();

  app.get("/status", requireScope("status:read"), async (c) => {
    const now = deps.now();
    const [codes, clients] = await Promise.all([deps.enrollment.listCodes(), deps.enrollment.listClients()]);
    return c.json({
      server_version: IVOAI_VERSION,
      protocol_version: PROTOCOL_VERSION,
      started_at: deps.startedAt.toISOString(),
      uptime_seconds: Math.floor((now.getTime() - deps.startedAt.getTime()) / 1000),
      listener: deps.listenerMode,
      clients: { active: clients.filter((client) => !client.revoked_at).length, total: clients.length },
      enrollment_codes: { pending: codes.filter((code) => code.status === "pending").length },
      caller: { id: c.get("client").id, scopes: c.get("client").scopes },
    });
  });

  app.get("/doctor", requireScope("doctor:read"), async (c) => {
    const checks = await runServerDoctor({
      paths: deps.paths,
      config: deps.config,
      listenerMode: deps.listenerMode,
      now: deps.now(),
      stores: SQL_STORES,
      vectors: deps.vectors,
      ...(deps.memory ? { memory: deps.memory } : {}),
    });
    const status = checks.some((check) => check.status === "fail")
      ? "fail"
      : checks.some((check) => check.status === "warn")
        ? "warn"
        : "ok";
    return c.json({ status, checks });
  });

  app.get("/connectors", requireScope("connector:read"), async (c) =>
    c.json({ connectors: await deps.listConnectors() }),
  );

  return app;
}
