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
import { EXPORT_FORMATS, type ExportedEvent, exportChunks, MAX_EXPORT_EVENTS } from "./export.js";
import { AUDIT_KINDS, type AuditListOptions, type AuditLog, type AuditRecord } from "./store.js";

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
/**
 * The filters the events list and the export share: a tool call's columns, and `q`, text anywhere in the event's
 * JSON (keys and kinds included, so `q=tool` matches every tool call: it is for values such as a path or an id).
 */
const filterFields = {
  since: isoTimeSchema.optional(),
  until: isoTimeSchema.optional(),
  kind: z.enum(AUDIT_KINDS).optional(),
  credential_id: z.string().min(1).max(200).optional(),
  tool: z.string().min(1).max(200).optional(),
  status: z.string().min(1).max(40).optional(),
  session_id: z.string().min(1).max(200).optional(),
  q: z.string().max(200).optional(),
};
const eventsSchema = z.object({
  ...filterFields,
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** The previous page's first id: the page of events before it. */
  before: z.coerce.number().int().min(1).optional(),
});
const exportSchema = z.object({
  ...filterFields,
  format: z.enum(EXPORT_FORMATS).default("jsonl"),
  limit: z.coerce.number().int().min(1).max(MAX_EXPORT_EVENTS).default(MAX_EXPORT_EVENTS),
});

/** The store's filter from the parsed query (absent values left out, times as ISO text). */
function filterOf(
  query: z.infer<z.ZodObject<typeof filterFields>>,
): Omit<AuditListOptions, "limit" | "before"> {
  return {
    ...(query.since ? { since: query.since.toISOString() } : {}),
    ...(query.until ? { until: query.until.toISOString() } : {}),
    ...(query.kind ? { kind: query.kind } : {}),
    ...(query.credential_id ? { credential_id: query.credential_id } : {}),
    ...(query.tool ? { tool: query.tool } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.session_id ? { session_id: query.session_id } : {}),
    ...(query.q ? { text: query.q } : {}),
  };
}

/** An event with its credential's name beside the id (tool calls), when the credential is still known. */
function named(names: Map<string, string>): (event: AuditRecord) => ExportedEvent {
  return (event) => {
    const name = event.kind === "tool_call" ? names.get(event.credential_id) : undefined;
    return name === undefined ? event : { ...event, credential_name: name };
  };
}
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
    const { limit, before } = query.value;
    const events = await audit.list({
      ...filterOf(query.value),
      limit,
      ...(before !== undefined ? { before } : {}),
    });
    // Events stay as the log holds them (the CLI's `server audit --json` shape); names come beside them.
    const names = await credentialNames(deps);
    const credential_names: Record<string, string> = {};
    for (const event of events) {
      const name = event.kind === "tool_call" ? names.get(event.credential_id) : undefined;
      if (name !== undefined && event.kind === "tool_call") credential_names[event.credential_id] = name;
    }
    return c.json({ events, credential_names });
  });

  // The filtered events as a download, newest first: JSON Lines (the events' own JSON) or CSV.
  app.get("/export", read, async (c) => {
    if (!audit) return problem(c, 503, "audit_unavailable", "this server keeps no audit log");
    const query = parseQuery(c, exportSchema);
    if (!query.ok) return query.response;
    const { format, limit } = query.value;
    const chunks = exportChunks(
      audit,
      filterOf(query.value),
      format,
      limit,
      named(await credentialNames(deps)),
    );
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
    const stamp = deps.now().toISOString().replace(/[:.]/g, "-");
    return new Response(body, {
      headers: {
        "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="ivoai-audit-${stamp}.${format}"`,
        "cache-control": "no-store",
      },
    });
  });

  app.get("/timeline", read, async (c) => {
    if (!memory && !audit) return problem(c, 503, "memory_unavailable", "the memory service is unavailable");
    const query = parseQuery(c, timelineSchema);
    if (!query.ok) return query.response;
    const sessionId = query.value.session_id;
    const asOfDate = query.value.as_of ?? deps.now();
    const asOf = asOfDate.toISOString();
    const { limit } = query.value;
    const [episodes, calls, names] = await Promise.all([
      memory ? memory.sessionEpisodes({ session_id: sessionId, as_of: asOf, limit }) : [],
      audit
        ? audit.list({
            kind: "tool_call",
            session_id: sessionId,
            // Calls recorded up to and including `as_of`.
            until: new Date(asOfDate.getTime() + 1).toISOString(),
            limit,
          })
        : [],
      credentialNames(deps),
    ]);
    const caller = c.get("client").id;
    const nameOf = (credential: string) => {
      const name = names.get(credential);
      return name === undefined ? {} : { credential_name: name };
    };
    // The store answers newest first (so a limit keeps the latest); ties then stay in recording order.
    const events: SessionTimeline["events"] = [...episodes].reverse().map((episode) => ({
      id: episode.id,
      kind: episode.kind,
      source: "episode" as const,
      project: episode.project,
      recorded_at: episode.recorded_at,
      valid_from: episode.valid_from,
      valid_to: episode.valid_to,
      // Episodes are isolated per credential (seed 004): audit:read sees what happened and when, never what
      // another credential recorded; no role is an exception, a console session never recorded anything.
      ...(episode.credential_id === caller ? { data: episode.data } : { data_withheld: true as const }),
      credential_id: episode.credential_id,
      ...nameOf(episode.credential_id),
    }));
    for (const call of calls) {
      if (call.kind !== "tool_call") continue;
      events.push({
        id: `audit:${call.id}`,
        kind: "tool_call",
        source: "tool_call",
        project: "",
        recorded_at: call.at,
        valid_from: null,
        valid_to: null,
        credential_id: call.credential_id,
        ...nameOf(call.credential_id),
        tool: call.tool,
        endpoint: call.endpoint,
        status: call.status,
        latency_ms: call.latency_ms,
      });
    }
    // Oldest first; the latest `limit` of both sources together (a tie keeps episodes before the call after them).
    events.sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : 0));
    const timeline: SessionTimeline = { session_id: sessionId, as_of: asOf, events: events.slice(-limit) };
    return c.json(timeline);
  });
  return app;
}
