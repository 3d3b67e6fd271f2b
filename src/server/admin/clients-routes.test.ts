// The clients API's "last used": each enrolled client's latest tool call, from the real audit log.
import { Hono } from "hono";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import type { EnrolledClient } from "../../protocol/console-api.js";
import { type AuditLog, openAuditLog } from "../audit/store.js";
import { createEnrollmentService, type EnrollmentService } from "../enrollment/service.js";
import { type EnrollmentStore, openEnrollmentStore } from "../enrollment/store.js";
import type { GatewayEnv } from "../http/env.js";
import { openSqliteSql } from "../store/sqlite.js";
import { createClientRoutes } from "./clients-routes.js";

describe("client routes: last used (in process)", () => {
  let cleanup: () => Promise<void>;
  let audit: AuditLog;
  let store: EnrollmentStore;
  let enrollment: EnrollmentService;
  let clock: Date;
  let app: Hono<GatewayEnv>;

  beforeEach(async () => {
    let dir: string;
    ({ dir, cleanup } = await tempDir());
    clock = new Date("2026-06-01T12:00:00.000Z");
    audit = await openAuditLog(openSqliteSql(`${dir}/audit.sqlite`), { now: () => clock });
    store = await openEnrollmentStore({ db: openSqliteSql(`${dir}/enrollment.sqlite`) });
    enrollment = createEnrollmentService({ store, now: () => clock });
    app = new Hono<GatewayEnv>();
    app.use(async (c, next) => {
      c.set("client", {
        id: "console_cs_1",
        name: "Ada (console)",
        scopes: ["clients:read", "clients:revoke"],
      });
      await next();
    });
    app.route("/v1/admin", createClientRoutes({ enrollment, audit, now: () => clock }));
  });
  afterEach(async () => {
    await audit.close();
    await store.close();
    await cleanup();
  });

  const enroll = async (name: string) => {
    const { code } = await enrollment.createCode({ ttlMs: 60_000 });
    const result = await enrollment.exchange(code, name);
    if (!result.ok) throw new Error(`enrollment failed: ${result.reason}`);
    return result.client.id;
  };
  const clients = async () => {
    const response = await app.request("/v1/admin/clients");
    expect(response.status).toBe(200);
    return ((await response.json()) as { clients: EnrolledClient[] }).clients;
  };

  it("shows each client's latest call, null for one that never called, and keeps it after revoking", async () => {
    const laptop = await enroll("laptop");
    const idle = await enroll("idle");
    expect((await clients()).map((client) => client.last_used_at)).toEqual([null, null]);
    // Last used is the time of the credential's last call written (calls are written in order).
    for (const minute of [1, 3, 7]) {
      clock = new Date(Date.UTC(2026, 5, 1, 12, minute));
      void audit.record({
        kind: "tool_call",
        tool: "context_search",
        endpoint: "ivoai-context",
        credential_id: laptop,
        session_id: null,
        tier: "read",
        status: "SUCCESS",
        latency_ms: 1,
        tokens_consumed: 1,
        guardrail_checked: true,
      });
    }
    const byId = new Map((await clients()).map((client) => [client.id, client.last_used_at]));
    expect(byId.get(laptop)).toBe("2026-06-01T12:07:00.000Z");
    expect(byId.get(idle)).toBeNull();
    const revoked = await app.request(`/v1/admin/clients/${laptop}/revoke`, { method: "POST" });
    expect(((await revoked.json()) as EnrolledClient).last_used_at).toBe("2026-06-01T12:07:00.000Z");
  });
});
