// The audit log over HTTP for the console (audit:read): activity aggregates, raw events, and a session's
// episodic timeline across every credential that recorded in it (content only to the credential that recorded it).
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { SessionTimeline } from "../../protocol/console-api.js";
import { SESSION_ID_PATTERN } from "../../protocol/tool-envelope.js";
import { credentialNames } from "../admin/credential-names.js";
import type { EnrollmentService } from "../enrollment/service.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import { isoTimeSchema, parseQuery } from "../http/query.js";
import type { EpisodeRecord, MemoryStore } from "../memory/store.js";
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

/** Every audit route, in one place: each handler is its own function below. */
export function createAuditRoutes(deps: AuditRoutesDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const read = requireScope("audit:read");
  app.get("/activity", read, (c) => activityRoute(c, deps));
  app.get("/events", read, (c) => eventsRoute(c, deps));
  // The filtered events as a download, newest first: JSON Lines (the events' own JSON) or CSV.
  app.get("/export", read, (c) => exportRoute(c, deps));
  app.get("/timeline", read, (c) => timelineRoute(c, deps));
  return app;
}

type AuditContext = Context<GatewayEnv>;

const noAuditLog = (c: AuditContext) =>
  problem(c, 503, "audit_unavailable", "this server keeps no audit log");

async function activityRoute(c: AuditContext, deps: AuditRoutesDeps): Promise<Response> {
  const { audit } = deps;
  if (!audit) return noAuditLog(c);
  const query = parseQuery(c, activitySchema);
  if (!query.ok) return query.response;
  const window = activityWindow(query.value, deps.now());
  if (!window.ok) return problem(c, 400, "invalid_request", window.message);
  const activity = await audit.activity(window.value);
  // Credentials by name too: an enrolled client's name, a Web MCP client's registered name.
  const names = await credentialNames(deps);
  for (const entry of activity.by_credential) {
    const name = names.get(entry.key);
    if (name) entry.name = name;
  }
  return c.json(activity);
}

type ActivityWindow = { since: Date; until: Date; bucket: z.infer<typeof activitySchema>["bucket"] };

/** The window an activity query asks for (default: the day before `now`), or why it is refused. */
function activityWindow(
  query: z.infer<typeof activitySchema>,
  now: Date,
): { ok: true; value: ActivityWindow } | { ok: false; message: string } {
  const until = query.until ?? now;
  const since = query.since ?? new Date(until.getTime() - DAY_MS);
  if (since.getTime() >= until.getTime()) return { ok: false, message: "since must be before until" };
  if (until.getTime() - since.getTime() > MAX_ACTIVITY_DAYS * DAY_MS) {
    return { ok: false, message: `the window is longer than ${MAX_ACTIVITY_DAYS} days` };
  }
  const window = { since, until, bucket: query.bucket };
  const buckets = bucketCount(window);
  if (buckets > MAX_ACTIVITY_BUCKETS) {
    return {
      ok: false,
      message: `the window holds ${buckets} ${window.bucket} buckets; at most ${MAX_ACTIVITY_BUCKETS}: use a larger bucket or a shorter window`,
    };
  }
  return { ok: true, value: window };
}

async function eventsRoute(c: AuditContext, deps: AuditRoutesDeps): Promise<Response> {
  const { audit } = deps;
  if (!audit) return noAuditLog(c);
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
}

async function exportRoute(c: AuditContext, deps: AuditRoutesDeps): Promise<Response> {
  const { audit } = deps;
  if (!audit) return noAuditLog(c);
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
  const stamp = deps.now().toISOString().replace(/[:.]/g, "-");
  return new Response(textStream(chunks), {
    headers: {
      "content-type": format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8",
      "content-disposition": `attachment; filename="ivoai-audit-${stamp}.${format}"`,
      "cache-control": "no-store",
    },
  });
}

/** A byte stream pulling text chunks one at a time (so a large export is never held whole). */
function textStream(chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

async function timelineRoute(c: AuditContext, deps: AuditRoutesDeps): Promise<Response> {
  const { audit, memory } = deps;
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
  const events = [...episodeEvents(episodes, caller, nameOf), ...callEvents(calls, nameOf)];
  // Oldest first; the latest `limit` of both sources together (a tie keeps episodes before the call after them).
  events.sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : 0));
  const timeline: SessionTimeline = { session_id: sessionId, as_of: asOf, events: events.slice(-limit) };
  return c.json(timeline);
}

type TimelineEvent = SessionTimeline["events"][number];
type NameOf = (credential: string) => { credential_name?: string };

/** The session's episodes, oldest first, their content only for the credential that recorded them. */
function episodeEvents(episodes: readonly EpisodeRecord[], caller: string, nameOf: NameOf): TimelineEvent[] {
  // The store answers newest first (so a limit keeps the latest); ties then stay in recording order.
  return [...episodes].reverse().map((episode) => ({
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
}

/** The session's tool calls as timeline events. */
function callEvents(calls: readonly AuditRecord[], nameOf: NameOf): TimelineEvent[] {
  const events: TimelineEvent[] = [];
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
  return events;
}
