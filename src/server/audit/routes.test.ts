import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import type { Activity, SessionTimeline } from "../../protocol/console-api.js";
import type { EnrollmentService } from "../enrollment/service.js";
import type { GatewayEnv } from "../http/env.js";
import { openSqliteSql } from "../store/sqlite.js";
import { toolCall } from "./events.test-kit.js";
import { createAuditRoutes, MAX_ACTIVITY_DAYS } from "./routes.js";
import { type AuditLog, type AuditRecord, openAuditLog, type ToolCallEvent } from "./store.js";

const DAY = 86_400_000;

/** An audit log in a temp folder and the audit routes over it, called as a viewer named Eva. */
async function openAuditApp(now: () => Date, enrollment?: EnrollmentService) {
  const { dir, cleanup } = await tempDir();
  const audit = await openAuditLog(openSqliteSql(`${dir}/audit.sqlite`), { now });
  const app = new Hono<GatewayEnv>();
  app.use(async (c, next) => {
    c.set("client", { id: "viewer", name: "Eva", scopes: ["audit:read"] });
    await next();
  });
  app.route(
    "/v1/audit",
    createAuditRoutes({ audit, memory: undefined, now, ...(enrollment ? { enrollment } : {}) }),
  );
  return { audit, app, cleanup };
}

describe("audit routes: the activity window (in process)", () => {
  let cleanup: () => Promise<void>;
  let audit: AuditLog;
  let clock: Date;
  let app: Hono<GatewayEnv>;

  beforeEach(async () => {
    clock = new Date("2026-06-01T12:00:00Z");
    ({ audit, app, cleanup } = await openAuditApp(() => clock));
  });
  afterEach(async () => {
    await audit.close();
    await cleanup();
  });

  const activity = async (params: Record<string, string>) => {
    const response = await app.request(`/v1/audit/activity?${new URLSearchParams(params)}`);
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("refuses times that are not real dates between 2000 and 9999 with a 400 JSON error", async () => {
    for (const params of [
      { until: "-271821-04-20T00:00:00Z" },
      { since: "-271821-04-20T00:00:00Z" },
      { until: "+275760-09-13T00:00:00Z" },
      { since: "1999-12-31T23:59:59Z", until: "2000-01-02T00:00:00Z" },
      { since: "9999-12-31T00:00:00Z", until: "+010000-01-01T00:00:00Z" },
      { until: "not a time" },
    ]) {
      const { status, body } = await activity(params);
      expect({ params, status, error: body.error }).toEqual({
        params,
        status: 400,
        error: "invalid_request",
      });
      expect(String(body.message)).toMatch(/^(since|until): expected/);
    }
    // The edges themselves are fine.
    expect((await activity({ since: "2000-01-01T00:00:00Z", until: "2000-01-02T00:00:00Z" })).status).toBe(
      200,
    );
    expect(
      (await activity({ since: "9999-12-01T00:00:00Z", until: "9999-12-31T23:59:59.999Z", bucket: "day" }))
        .status,
    ).toBe(200);
  });

  it(`refuses a window longer than ${MAX_ACTIVITY_DAYS} days, and answers one exactly that long`, async () => {
    const until = new Date("2026-06-01T00:00:00Z");
    const since = (days: number, extraMs = 0) =>
      new Date(until.getTime() - days * DAY - extraMs).toISOString();
    const tooLong = await activity({
      since: since(MAX_ACTIVITY_DAYS, 1),
      until: until.toISOString(),
      bucket: "day",
    });
    expect(tooLong).toEqual({
      status: 400,
      body: { error: "invalid_request", message: `the window is longer than ${MAX_ACTIVITY_DAYS} days` },
    });
    const years = await activity({ since: "2023-06-01T00:00:00Z", bucket: "day" });
    expect(years.status).toBe(400);
    clock = new Date(until.getTime() - 10 * DAY);
    void audit.record(toolCall({ latency_ms: 12, tokens_consumed: 3 }));
    const quarter = await activity({
      since: since(MAX_ACTIVITY_DAYS),
      until: until.toISOString(),
      bucket: "day",
    });
    expect(quarter.status).toBe(200);
    const body = quarter.body as unknown as Activity;
    expect(body.series).toHaveLength(MAX_ACTIVITY_DAYS);
    expect(body.totals).toEqual({ calls: 1, errors: 0, p50_ms: 12, p95_ms: 12, tokens: 3 });
    // Without `since`, the window is the day before `until`.
    const recent = await activity({ until: new Date(until.getTime() - 9.5 * DAY).toISOString() });
    expect((recent.body as unknown as Activity).totals.calls).toBe(1);
  });

  it("pages events back by id and refuses a cursor that is not one", async () => {
    for (const id of ["cli_1", "cli_2", "cli_3"])
      await audit.record({ kind: "client_revoked", actor: "Eva", detail: { target: "client", id } });
    const page = async (query: string) => {
      const response = await app.request(`/v1/audit/events?${query}`);
      return {
        status: response.status,
        body: (await response.json()) as {
          events?: { id: number; detail: { id: string } }[];
          error?: string;
        },
      };
    };
    const newest = await page("limit=2");
    expect(newest.body.events?.map((event) => event.detail.id)).toEqual(["cli_2", "cli_3"]);
    const older = await page(`limit=2&before=${newest.body.events?.[0]?.id}`);
    expect(older.body.events?.map((event) => event.detail.id)).toEqual(["cli_1"]);
    for (const bad of ["before=0", "before=x", "before=1.5"])
      expect(await page(bad)).toMatchObject({ status: 400, body: { error: "invalid_request" } });
  });
});

describe("audit routes: filters, export and a session's tool calls (in process)", () => {
  let cleanup: () => Promise<void>;
  let audit: AuditLog;
  let clock: Date;
  let app: Hono<GatewayEnv>;

  const call = (over: Partial<ToolCallEvent>) => toolCall({ latency_ms: 12, tokens_consumed: 3, ...over });

  beforeEach(async () => {
    clock = new Date("2026-06-01T12:00:00Z");
    const enrollment = {
      listClients: async () => [
        {
          id: "cli_a",
          name: "laptop",
          scopes: [],
          created_at: "",
          enrollment_id: "e",
          revoked_at: null,
        },
      ],
    };
    ({ audit, app, cleanup } = await openAuditApp(() => clock, enrollment as unknown as EnrollmentService));
    const at = (minute: number) => new Date(Date.UTC(2026, 5, 1, 11, minute));
    clock = at(0);
    void audit.record(call({ tool: '=HYPERLINK("http://x")', status: "FAILED", session_id: "s2" }));
    clock = at(1);
    void audit.record(
      call({
        tool: "memory_read_page",
        endpoint: "ivoai-memory",
        credential_id: "oauth:oc_1",
        tier: null,
        status: "REJECTED",
        guardrail_checked: false,
        detail: { reason: "unknown tool" },
      }),
    );
    clock = at(2);
    void audit.record(call({ tool: "context_search", latency_ms: 40 }));
    clock = at(3);
    await audit.record({
      kind: "client_revoked",
      actor: 'Eva, "admin"',
      detail: { target: "client", id: "cli_b" },
    });
    clock = new Date("2026-06-01T12:00:00Z");
  });
  afterEach(async () => {
    await audit.close();
    await cleanup();
  });

  const events = async (query: string) => {
    const response = await app.request(`/v1/audit/events?${query}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      events: AuditRecord[];
      credential_names: Record<string, string>;
    };
    // The names come beside the events, which stay as the CLI lists them.
    return body.events.map((event) => ({
      ...event,
      credential_name: event.kind === "tool_call" ? body.credential_names[event.credential_id] : undefined,
    }));
  };

  it("filters events by credential, tool, status, kind, time and text, naming credentials", async () => {
    expect((await events("credential_id=cli_a")).map((e) => e.kind === "tool_call" && e.tool)).toEqual([
      '=HYPERLINK("http://x")',
      "context_search",
    ]);
    expect((await events("credential_id=cli_a"))[0]?.credential_name).toBe("laptop");
    expect((await events("status=FAILED")).map((e) => e.id)).toHaveLength(1);
    expect(
      (await events("tool=memory_read_page")).map((e) => e.kind === "tool_call" && e.credential_id),
    ).toEqual(["oauth:oc_1"]);
    expect((await events("kind=client_revoked")).map((e) => e.kind)).toEqual(["client_revoked"]);
    const window = await events("since=2026-06-01T11:01:00Z&until=2026-06-01T11:03:00Z");
    expect(window.map((e) => e.at)).toEqual(["2026-06-01T11:01:00.000Z", "2026-06-01T11:02:00.000Z"]);
    // Text anywhere in the event, case-insensitive, LIKE's own characters taken literally.
    expect((await events("q=CLI_B")).map((e) => e.kind)).toEqual(["client_revoked"]);
    expect(await events("q=%25")).toEqual([]);
    expect((await events("session_id=s2")).map((e) => e.kind === "tool_call" && e.status)).toEqual([
      "FAILED",
    ]);
  });

  it("exports the filtered events as JSON Lines and as CSV safe to open in a spreadsheet", async () => {
    const jsonl = await app.request("/v1/audit/export?format=jsonl&credential_id=cli_a");
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers.get("content-type")).toContain("application/x-ndjson");
    expect(jsonl.headers.get("content-disposition")).toMatch(
      /^attachment; filename="ivoai-audit-.*\.jsonl"$/,
    );
    const lines = (await jsonl.text()).trimEnd().split("\n");
    // Newest first, each line an event with its credential's name.
    expect(lines.map((line) => (JSON.parse(line) as { tool: string }).tool)).toEqual([
      "context_search",
      '=HYPERLINK("http://x")',
    ]);
    expect((JSON.parse(lines[0] ?? "{}") as { credential_name: string }).credential_name).toBe("laptop");

    const csv = await app.request("/v1/audit/export?format=csv");
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(csv.headers.get("content-disposition")).toMatch(/filename="ivoai-audit-.*\.csv"$/);
    const rows = (await csv.text()).split("\r\n");
    expect(rows[0]).toBe(
      "id,at,kind,tool,endpoint,tier,credential_id,credential_name,session_id,status,guardrail_checked," +
        "latency_ms,tokens_consumed,actor,detail",
    );
    expect(rows).toHaveLength(6);
    expect(rows[1]).toBe(
      '4,2026-06-01T11:03:00.000Z,client_revoked,,,,,,,,,,,"Eva, ""admin""","{""target"":""client"",""id"":""cli_b""}"',
    );
    // A formula in an agent's tool name is prefixed with a quote and stays one quoted cell.
    expect(rows[4]).toBe(
      `1,2026-06-01T11:00:00.000Z,tool_call,"'=HYPERLINK(""http://x"")",ivoai-context,read,cli_a,laptop,s2,FAILED,true,12,3,,`,
    );
    // Every field of a tool call has its column: a call refused before it ran (no tier), with its detail.
    expect(rows[3]).toBe(
      "2,2026-06-01T11:01:00.000Z,tool_call,memory_read_page,ivoai-memory,,oauth:oc_1,,s1,REJECTED,false,12,3,," +
        '"{""reason"":""unknown tool""}"',
    );
    expect(rows[5]).toBe("");
    const bad = await app.request("/v1/audit/export?format=xlsx");
    expect(bad.status).toBe(400);
  });

  it("lists a session's tool calls in its timeline, oldest first, even without a memory service", async () => {
    const response = await app.request("/v1/audit/timeline?session_id=s1");
    expect(response.status).toBe(200);
    const timeline = (await response.json()) as SessionTimeline;
    expect(
      timeline.events.map((e) => [
        e.source,
        e.tool,
        e.status,
        e.latency_ms,
        e.credential_name ?? e.credential_id,
      ]),
    ).toEqual([
      ["tool_call", "memory_read_page", "REJECTED", 12, "oauth:oc_1"],
      ["tool_call", "context_search", "SUCCESS", 40, "laptop"],
    ]);
    const earlier = (await (
      await app.request("/v1/audit/timeline?session_id=s1&as_of=2026-06-01T11:01:00Z")
    ).json()) as SessionTimeline;
    expect(earlier.events.map((e) => e.tool)).toEqual(["memory_read_page"]);
  });
});
