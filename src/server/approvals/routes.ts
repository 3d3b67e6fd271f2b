// The approvals HTTP API the web console uses: list (paginated summaries, filtered), show (with what the request
// changes, field by field), approve, reject, and one decision over many. Deciding needs approvals:decide, a
// scope no default enrollment grants, and nobody approves their own request.
import { Hono } from "hono";
import { z } from "zod";
import { MAX_BULK_DECISION } from "../../protocol/approvals.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import { isoTimeSchema, parseQuery } from "../http/query.js";
import { type ApprovalGate, type CredentialNames, DEFAULT_APPROVAL_PAGE, MAX_APPROVAL_PAGE } from "./gate.js";

const STATUSES = ["pending", "applied", "rejected", "expired", "conflict"] as const;
const decisionSchema = z.object({ reason: z.string().max(2000).optional() });
const listSchema = z.object({
  status: z.enum(STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_APPROVAL_PAGE).default(DEFAULT_APPROVAL_PAGE),
  cursor: z.string().min(1).max(512).optional(),
  requester: z.string().min(1).max(300).optional(),
  scope: z.string().min(1).max(300).optional(),
  tool: z.string().min(1).max(100).optional(),
  q: z.string().min(1).max(300).optional(),
  before: isoTimeSchema.optional(),
  after: isoTimeSchema.optional(),
});
const bulkSchema = z.object({
  ids: z.array(z.string().min(1).max(100)).min(1).max(MAX_BULK_DECISION),
  approve: z.boolean(),
  reason: z.string().max(2000).optional(),
});

export interface ApprovalRoutesDeps {
  gate: ApprovalGate | undefined;
  /** Credential names for requesters (enrolled and Web MCP clients); none when absent. */
  names?: () => Promise<CredentialNames>;
}

/** With no gate (memory unavailable) every route answers 503. */
export function createApprovalRoutes(deps: ApprovalRoutesDeps): Hono<GatewayEnv> {
  const { gate } = deps;
  const names = deps.names ?? (async () => new Map<string, string>());
  const app = new Hono<GatewayEnv>();
  if (!gate) {
    app.all("*", (c) => problem(c, 503, "memory_unavailable", "the memory service is unavailable"));
    return app;
  }
  app.get("/", requireScope("approvals:read"), async (c) => {
    const query = parseQuery(c, listSchema);
    if (!query.ok) return query.response;
    const { before, after, ...rest } = query.value;
    // A bad cursor is a USAGE error: the app's error map answers it with 400.
    return c.json(
      await gate.list(
        {
          ...rest,
          ...(before ? { before: before.toISOString() } : {}),
          ...(after ? { after: after.toISOString() } : {}),
        },
        await names(),
      ),
    );
  });
  // Before "/:id/…": one decision over many requests, each applied (or not) exactly as on its own.
  app.post("/decide", requireScope("approvals:decide"), async (c) => {
    const body = await readJsonBody(c, bulkSchema);
    if (!body.ok) return body.response;
    const client = c.get("client");
    const { ids, approve, reason } = body.value;
    return c.json({
      results: await gate.decideMany(ids, approve, `${client.name} (${client.id})`, reason, client.id),
    });
  });
  // Before "/:id", which would take "counts" for an id.
  app.get("/counts", requireScope("approvals:read"), async (c) => c.json(await gate.counts()));
  app.get("/:id", requireScope("approvals:read"), async (c) => {
    const approval = await gate.detail(c.req.param("id"), await names());
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
