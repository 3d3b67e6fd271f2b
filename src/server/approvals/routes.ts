// The approvals HTTP API the web console uses: list, show, approve, reject. Deciding needs approvals:decide,
// a scope no default enrollment grants.
import { Hono } from "hono";
import { z } from "zod";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import type { ApprovalStatus } from "../memory/store.js";
import type { ApprovalGate } from "./gate.js";

const STATUSES = ["pending", "applied", "rejected", "expired", "conflict"] as const;
const decisionSchema = z.object({ reason: z.string().max(2000).optional() });

/** With no gate (memory unavailable) every route answers 503. */
export function createApprovalRoutes(deps: { gate: ApprovalGate | undefined }): Hono<GatewayEnv> {
  const { gate } = deps;
  const app = new Hono<GatewayEnv>();
  if (!gate) {
    app.all("*", (c) => problem(c, 503, "memory_unavailable", "the memory service is unavailable"));
    return app;
  }
  app.get("/", requireScope("approvals:read"), async (c) => {
    const status = c.req.query("status");
    if (status && !STATUSES.includes(status as ApprovalStatus)) {
      return problem(c, 400, "invalid_request", `status must be one of ${STATUSES.join(", ")}`);
    }
    return c.json({ approvals: await gate.list(status as ApprovalStatus | undefined) });
  });
  app.get("/:id", requireScope("approvals:read"), async (c) => {
    const approval = await gate.get(c.req.param("id"));
    return approval ? c.json(approval) : problem(c, 404, "not_found", "no such approval");
  });
  for (const verb of ["approve", "reject"] as const) {
    app.post(`/:id/${verb}`, requireScope("approvals:decide"), async (c) => {
      const body = await readJsonBody(c, decisionSchema);
      if (!body.ok) return body.response;
      const id = c.req.param("id");
      if (!(await gate.get(id))) return problem(c, 404, "not_found", "no such approval");
      const client = c.get("client");
      const outcome = await gate.decide(
        id,
        verb === "approve",
        `${client.name} (${client.id})`,
        body.value.reason,
      );
      const status = outcome.outcome === "applied" || outcome.outcome === "rejected" ? 200 : 409;
      return c.json(outcome, status);
    });
  }
  return app;
}
