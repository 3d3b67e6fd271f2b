// The approvals HTTP API the web console uses: list (paginated summaries), show, approve, reject. Deciding
// needs approvals:decide, a scope no default enrollment grants, and nobody approves their own request.
import { Hono } from "hono";
import { z } from "zod";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import { parseQuery } from "../http/query.js";
import { type ApprovalGate, DEFAULT_APPROVAL_PAGE, MAX_APPROVAL_PAGE } from "./gate.js";

const STATUSES = ["pending", "applied", "rejected", "expired", "conflict"] as const;
const decisionSchema = z.object({ reason: z.string().max(2000).optional() });
const listSchema = z.object({
  status: z.enum(STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_APPROVAL_PAGE).default(DEFAULT_APPROVAL_PAGE),
  cursor: z.string().min(1).max(512).optional(),
});

/** With no gate (memory unavailable) every route answers 503. */
export function createApprovalRoutes(deps: { gate: ApprovalGate | undefined }): Hono<GatewayEnv> {
  const { gate } = deps;
  const app = new Hono<GatewayEnv>();
  if (!gate) {
    app.all("*", (c) => problem(c, 503, "memory_unavailable", "the memory service is unavailable"));
    return app;
  }
  app.get("/", requireScope("approvals:read"), async (c) => {
    const query = parseQuery(c, listSchema);
    if (!query.ok) return query.response;
    // A bad cursor is a USAGE error: the app's error map answers it with 400.
    return c.json(await gate.list(query.value));
  });
  // Before "/:id", which would take "counts" for an id.
  app.get("/counts", requireScope("approvals:read"), async (c) => c.json(await gate.counts()));
  app.get("/:id", requireScope("approvals:read"), async (c) => {
    const approval = await gate.get(c.req.param("id"));
    return approval ? c.json(approval) : problem(c, 404, "not_found", "no such approval");
  });
  for (const verb of ["approve", "reject"] as const) {
    app.post(`/:id/${verb}`, requireScope("approvals:decide"), async (c) => {
      const body = await readJsonBody(c, decisionSchema);
      if (!body.ok) return body.response;
      const id = c.req.param("id");
      const client = c.get("client");
      // NOT_FOUND (404) and self-approval (FORBIDDEN, 403 self_approval) come from the gate via the error map.
      const outcome = await gate.decide(
        id,
        verb === "approve",
        `${client.name} (${client.id})`,
        body.value.reason,
        client.id,
      );
      const status = outcome.outcome === "applied" || outcome.outcome === "rejected" ? 200 : 409;
      return c.json(outcome, status);
    });
  }
  return app;
}
