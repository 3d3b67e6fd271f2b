// POST /v1/enroll: a single-use code becomes a bearer credential, shown once.
import { Hono } from "hono";
import { z } from "zod";
import type { Logger } from "../../shared/logger.js";
import { clientAddress, type GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import type { RateLimiter } from "./rate-limit.js";
import type { EnrollmentService } from "./service.js";

const enrollRequestSchema = z.object({
  code: z.string().min(1).max(256),
  client_name: z.string().min(1).max(128).optional(),
});

export interface EnrollRoutesDeps {
  enrollment: EnrollmentService;
  limiter: RateLimiter;
  logger: Logger;
}

export function createEnrollRoutes(deps: EnrollRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  app.post("/", async (c) => {
    const source = clientAddress(c);
    const budget = deps.limiter.hit(source);
    if (!budget.allowed) {
      deps.logger.warn("enrollment rate limited", { remote: source });
      c.header("Retry-After", String(budget.retryAfterSeconds));
      return problem(c, 429, "rate_limited", "too many enrollment attempts; try again later");
    }
    const body = await readJsonBody(c, enrollRequestSchema);
    if (!body.ok) return body.response;
    const result = await deps.enrollment.exchange(
      body.value.code,
      body.value.client_name ?? "unnamed client",
    );
    if (!result.ok) {
      // One answer for invalid, expired, consumed and revoked: the state of a code is not disclosed.
      deps.logger.warn("enrollment refused", { remote: source, reason: result.reason });
      return problem(c, 400, "invalid_enrollment_code", "the enrollment code is invalid or no longer usable");
    }
    deps.logger.info("client enrolled", { client_id: result.client.id, remote: source });
    return c.json(
      {
        client_id: result.client.id,
        credential: result.credential,
        token_type: "Bearer",
        scopes: result.client.scopes,
      },
      201,
    );
  });
  return app;
}
