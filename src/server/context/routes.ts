// Context search over HTTP for the console (context:read): the context_search tool's data, audited as a call
// of that tool (endpoint "http-api") so the activity view counts it like any other search.
import { Hono } from "hono";
import { z } from "zod";
import type { SearchResults } from "../../protocol/console-api.js";
import { estimateTokens } from "../../protocol/tool-envelope.js";
import type { AuditLog } from "../audit/store.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { parseQuery } from "../http/query.js";
import { MAX_SEARCH_RESULTS } from "./search.js";
import type { ContextService } from "./service.js";
import { contextSearchData } from "./tools.js";

/** The `endpoint` of audit events recorded by the HTTP API rather than an MCP endpoint. */
export const HTTP_API_ENDPOINT = "http-api";

const searchSchema = z.object({
  q: z.string().min(1).max(2000),
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_RESULTS).default(10),
  source: z.string().min(1).max(128).optional(),
});

export function createContextRoutes(deps: { context: ContextService; audit?: AuditLog }): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.get("/search", requireScope("context:read"), async (c) => {
    const query = parseQuery(c, searchSchema);
    if (!query.ok) return query.response;
    const started = performance.now();
    const { q, limit, source } = query.value;
    const hits = await deps.context.searcher.search(q, { limit, ...(source ? { connector: source } : {}) });
    const data: SearchResults = contextSearchData(q, hits);
    // A failed audit write is reported by the audit log itself (it writes after the answer).
    void deps.audit?.record({
      kind: "tool_call",
      tool: "context_search",
      endpoint: HTTP_API_ENDPOINT,
      credential_id: c.get("client").id,
      session_id: null,
      tier: "read",
      status: "SUCCESS",
      latency_ms: Math.round(performance.now() - started),
      tokens_consumed: estimateTokens(JSON.stringify(data)),
      guardrail_checked: true,
    });
    return c.json(data);
  });
  return app;
}
