// The audit log over HTTP for the console (audit:read): activity aggregates, raw events, and a session's
// episodic timeline across every credential that recorded in it (content only to the credential that recorded it).
import { Hono } from "hono";
import { z } from "zod";
import type { SessionTimeline } from "../../protocol/console-api.js";
import { SESSION_ID_PATTERN } from "../../protocol/tool-envelope.js";
import { credentialNames } from "../admin/credential-names.js";
import type { EnrollmentService } from "../enrollment/service.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import { isoTimeSchema, parseQuery } from "../http/query.js";
import type { MemoryStore } from "../memory/store.js";
import type { OAuthStore } from "../oauth/store.js";
import { BUCKET_MS, bucketCount, MAX_ACTIVITY_BUCKETS } from "./activity.js";
import { AUDIT_KINDS, type AuditLog } from "./store.js";

const DAY_MS = 86_400_000;
/** The longest activity window: a quarter, with a day to spare at each end. */
export const MAX_ACTIVITY_DAYS = 93;
const EARLIEST = Date.parse("2000-01-01T00:00:00Z");
const LATEST = Date.parse("9999-12-31T23:59:59.999Z");
/** An activity window's end: a real date (a default `since` a day earlier stays one too). */
const activityTimeSchema = isoTimeSchema.refine(
  (date) => date.getTime() >= EARLIEST && date.getTime() <= LATEST,
  { message: "expected a time between 2000-01-01 and 9999-12-31" },
);
const activitySchema = z.object({
  since: activityTimeSchema.optional(),
  until: activityTimeSchema.optional(),
  bucket: z.enum(Object.keys(BUCKET_MS) as ["minute", "hour", "day"]).default("hour"),
});
const eventsSchema = z.object({
  since: isoTimeSchema.optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  kind: z.enum(AUDIT_KINDS).optional(),
  /** The previous page's first id: the page of events before it. */
  before: z.coerce.number().int().min(1).optional(),
});
// The session id is a query parameter: ids are the agents' own (`.` and `..` among the allowed), which a path
// segment would not carry through URL normalisation.
const timelineSchema = z.object({
  session_id: z.string().regex(SESSION_ID_PATTERN, "invalid session id"),
  as_of: isoTimeSchema.optional(),
  limit: z.coerce.number().int().min(1).max(5000).default(1000),
});

export interface AuditRoutesDeps {
  audit: AuditLog | undefined;
  enrollment?: EnrollmentService | undefined;
  oauth?: OAuthStore | undefined;
  /** The memory store holding episodic events; undefined when memory is unavailable. */
  memory: MemoryStore | undefined;
  now: () => Date;
}

export function createAuditRoutes(deps: AuditRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const { audit, memory } = deps;
  const read = requireScope("audit:read");

  app.get("/activity", read, async (c) => {
    if (!audit) return problem(c, 503, "audit_unavailable", "this server keeps no audit log");
    const query = parseQuery(c, activitySchema);
    if (!query.ok) return query.response;
    const until = query.value.until ?? deps.now();
    const since = query.value.since ?? new Date(until.getTime() - DAY_MS);
    if (since.getTime() >= until.getTime()) {
      return problem(c, 400, "invalid_request", "since must be before until");
    }
    if (until.getTime() - since.getTime() > MAX_ACTIVITY_DAYS * DAY_MS) {
      return problem(c, 400, "invalid_request", `the window is longer than ${MAX_ACTIVITY_DAYS} days`);
    }
    const window = { since, until, bucket: query.value.bucket };
    const buckets = bucketCount(window);
    if (buckets > MAX_ACTIVITY_BUCKETS) {
      return problem(
        c,
        400,
        "invalid_request",
        `the window holds ${buckets} ${window.bucket} buckets; at most ${MAX_ACTIVITY_BUCKETS}: use a larger bucket or a shorter window`,
      );
    }
    const activity = await audit.activity(window);
    // Credentials by name too: an enrolled client's name, a Web MCP client's registered name.
    const names = await credentialNames(deps);
    for (const entry of activity.by_credential) {
      const name = names.get(entry.key);
      if (name) entry.name = name;
    }
    return c.json(activity);
  });

  app.get("/events", read, async (c) => {
    if (!audit) return problem(c, 503, "audit_unavailable", "this server keeps no audit log");
    const query = parseQuery(c, eventsSchema);
    if (!query.ok) return query.response;
    const { since, limit, kind, before } = query.value;
    return c.json({
      events: await audit.list({
        limit,
        ...(since ? { since: since.toISOString() } : {}),
        ...(kind ? { kind } : {}),
        ...(before !== undefined ? { before } : {}),
      }),
    });
  });

  app.get("/timeline", read, async (c) => {
    if (!memory) return problem(c, 503, "memory_unavailable", "the memory service is unavailable");
    const query = parseQuery(c, timelineSchema);
    if (!query.ok) return query.response;
    const sessionId = query.value.session_id;
    const asOf = (query.value.as_of ?? deps.now()).toISOString();
    const episodes = await memory.sessionEpisodes({
      session_id: sessionId,
      as_of: asOf,
      limit: query.value.limit,
    });
    const caller = c.get("client").id;
    const timeline: SessionTimeline = {
      session_id: sessionId,
      as_of: asOf,
      // The store answers newest first (so a limit keeps the latest); a timeline reads oldest first.
      events: episodes.reverse().map((episode) => ({
        id: episode.id,
        kind: episode.kind,
        project: episode.project,
        recorded_at: episode.recorded_at,
        valid_from: episode.valid_from,
        valid_to: episode.valid_to,
        // Episodes are isolated per credential (seed 004): audit:read sees what happened and when, never what
        // another credential recorded; no role is an exception, a console session never recorded anything.
        ...(episode.credential_id === caller ? { data: episode.data } : { data_withheld: true as const }),
        credential_id: episode.credential_id,
      })),
    };
    return c.json(timeline);
  });
  return app;
}
