// POST /v1/memory: lifecycle hook events from agent sessions (bounded, fast, append-only), and
// GET /v1/memory/events: episodic queries over the caller's own events, one session unless the project is asked for.
import { Hono } from "hono";
import { z } from "zod";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { readJsonBody } from "../http/json-body.js";
import { problem } from "../http/problem.js";
import type { MemoryStore } from "./store.js";

export const HOOK_EVENT_KINDS = ["session_start", "prompt_submitted", "tool_used", "session_end"] as const;
export const MAX_HOOK_BODY_BYTES = 64 * 1024;

const iso = z.string().datetime({ offset: true });
const eventSchema = z.object({
  session_id: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[\w:.@-]+$/),
  project: z.string().min(1).max(256),
  event: z.enum(HOOK_EVENT_KINDS),
  valid_from: iso.optional(),
  valid_to: iso.optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

const querySchema = z.object({
  scope: z.enum(["session", "project"]).default("session"),
  session_id: z.string().min(1).max(128).optional(),
  project: z.string().min(1).max(256).optional(),
  as_of: iso.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

export function createHookRoutes(deps: {
  /** Undefined when the memory store could not be opened: the routes answer 503. */
  store: MemoryStore | undefined;
  now?: () => Date;
}): Hono<GatewayEnv> {
  const now = deps.now ?? (() => new Date());
  const app = new Hono<GatewayEnv>();

  app.post("/", requireScope("memory:write"), async (c) => {
    const length = Number(c.req.header("content-length") ?? "0");
    if (length > MAX_HOOK_BODY_BYTES) {
      return problem(c, 413, "payload_too_large", `hook events are limited to ${MAX_HOOK_BODY_BYTES} bytes`);
    }
    const { store } = deps;
    if (!store) return problem(c, 503, "memory_unavailable", "the memory service is unavailable");
    // A chunked body has no Content-Length: its real size is checked once read.
    const body = await readJsonBody(c, eventSchema, MAX_HOOK_BODY_BYTES);
    if (!body.ok) return body.response;
    const event = body.value;
    if (Buffer.byteLength(JSON.stringify(event.data ?? {})) > 16 * 1024) {
      return problem(c, 413, "payload_too_large", "event data is limited to 16 KiB");
    }
    const recordedAt = now().toISOString();
    const id = await store.addEpisode({
      session_id: event.session_id,
      project: event.project,
      kind: event.event,
      recorded_at: recordedAt,
      valid_from: event.valid_from ? new Date(event.valid_from).toISOString() : null,
      valid_to: event.valid_to ? new Date(event.valid_to).toISOString() : null,
      data: event.data ?? {},
      credential_id: c.get("client").id,
    });
    return c.json({ id, recorded_at: recordedAt }, 202);
  });

  app.get("/events", requireScope("memory:read"), async (c) => {
    const { store } = deps;
    if (!store) return problem(c, 503, "memory_unavailable", "the memory service is unavailable");
    const parsed = querySchema.safeParse(c.req.query());
    if (!parsed.success)
      return problem(c, 400, "invalid_request", parsed.error.issues[0]?.message ?? "invalid query");
    const query = parsed.data;
    if (query.scope === "session" && !query.session_id) {
      return problem(c, 400, "invalid_request", "session scope needs session_id");
    }
    if (query.scope === "project" && !query.project)
      return problem(c, 400, "invalid_request", "project scope needs project");
    const events = await store.episodes({
      credential_id: c.get("client").id,
      ...(query.scope === "session"
        ? { session_id: query.session_id as string }
        : { project: query.project as string }),
      as_of: new Date(query.as_of ?? now().toISOString()).toISOString(),
      limit: query.limit,
    });
    return c.json({ events });
  });
  return app;
}
