// The agents' API under /v1, bearer only: the context and memory MCP endpoints and the memory hooks. Its bearer
// check also stands in front of every other /v1 path no sub-app answered, so an unknown route says 401, not 404.
import { Hono, type MiddlewareHandler } from "hono";
import { ENDPOINTS } from "../protocol/discovery.js";
import { createContextResources } from "./context/resources.js";
import { CONTEXT_INSTRUCTIONS } from "./context/tools.js";
import type { ResolvedGatewayDeps } from "./gateway-deps.js";
import { requireScope } from "./http/bearer-auth.js";
import type { GatewayEnv } from "./http/env.js";
import { problem } from "./http/problem.js";
import { createMcpEndpoint, type McpEndpoint } from "./mcp/endpoint.js";
import { createGatewayPrompts } from "./mcp/gateway-prompts.js";
import { createHookRoutes } from "./memory/hooks-routes.js";
import { createMemoryResources } from "./memory/resources.js";
import { MEMORY_INSTRUCTIONS } from "./memory/tools.js";

export interface AgentApiDeps extends ResolvedGatewayDeps {
  bearer: MiddlewareHandler<GatewayEnv>;
}

/** Mounted at the root after every other /v1 sub-app, since its bearer check covers all of /v1. */
export function createAgentApi(deps: AgentApiDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.use("/v1/*", deps.bearer);
  // Each endpoint offers the prompts its caller's tools can follow.
  const prompts = createGatewayPrompts({ context: deps.context, memory: deps.memory });
  const context = contextEndpoint(deps, prompts);
  if (context) {
    app.all(ENDPOINTS.contextMcp, requireScope("context:read"), (c) =>
      context(c.req.raw, c.get("client"), c.get("requestId")),
    );
  }
  if (deps.memory !== undefined) {
    const memory = memoryEndpoint(deps, prompts);
    app.all(ENDPOINTS.memoryMcp, (c) =>
      memory
        ? memory(c.req.raw, c.get("client"), c.get("requestId"))
        : problem(c, 503, "memory_unavailable", "the memory service is unavailable"),
    );
    app.route(ENDPOINTS.memoryHooks, createHookRoutes({ store: deps.memory?.store }));
  }
  return app;
}

type Prompts = ReturnType<typeof createGatewayPrompts>;

function contextEndpoint(deps: AgentApiDeps, prompts: Prompts): McpEndpoint | undefined {
  if (!deps.context) return undefined;
  return createMcpEndpoint({
    name: "ivoai-context",
    instructions: CONTEXT_INSTRUCTIONS,
    tools: deps.context.tools,
    resources: [createContextResources(deps.context.catalogue)],
    prompts,
    logger: deps.logger,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
}

/** The memory endpoint; undefined when memory could not be opened (the route answers 503). */
function memoryEndpoint(deps: AgentApiDeps, prompts: Prompts): McpEndpoint | undefined {
  const memory = deps.memory ?? undefined;
  if (!memory) return undefined;
  return createMcpEndpoint({
    name: "ivoai-memory",
    instructions: MEMORY_INSTRUCTIONS,
    tools: memory.tools,
    resources: [createMemoryResources(memory.store)],
    prompts,
    gate: memory.gate,
    logger: deps.logger,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
}
