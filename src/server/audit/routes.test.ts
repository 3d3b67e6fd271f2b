import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import type { Activity } from "../../protocol/console-api.js";
import type { GatewayEnv } from "../http/env.js";
import { openSqliteSql } from "../store/sqlite.js";
import { createAuditRoutes, MAX_ACTIVITY_DAYS } from "./routes.js";
import { type AuditLog, openAuditLog } from "./store.js";

const DAY = 86_400_000;

describe("audit routes: the activity window (in process)", () => {
  let cleanup: () => Promise<void>;
  let audit: AuditLog;
  let clock: Date;
  let app: Hono<GatewayEnv>;

  beforeEach(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempDir());
    clock = new Date("2026-06-01T12:00:00Z");
    audit = await openAuditLog(openSqliteSql(`${dir}/audit.sqlite`), { now: () => clock });
    app = new Hono<GatewayEnv>();
    app.use(async (c, next) => {
      c.set("client", { id: "viewer", name: "Eva", scopes: ["audit:read"] });
      await next();
    });
    app.route("/v1/audit", createAuditRoutes({ audit, memory: undefined, now: () => clock }));
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
    void audit.record({
      kind: "tool_call",
      tool: "context_search",
      endpoint: "ivoai-context",
      credential_id: "cli_a",
      session_id: "s1",
      tier: "read",
      status: "SUCCESS",
      latency_ms: 12,
      tokens_consumed: 3,
      guardrail_checked: true,
    });
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
