import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../config/server-config.js";
import { serverPaths } from "../config/server-paths.js";
import { IvoaiError, type IvoaiErrorCode } from "../shared/errors.js";
import { createLogger, type Logger, silentLogger } from "../shared/logger.js";
import { createGatewayApp } from "./app.js";
import { createEnrollmentService } from "./enrollment/service.js";
import { type EnrollmentStore, openEnrollmentStore } from "./enrollment/store.js";
import type { ReadinessCheck } from "./health/readiness.js";
import { openSqliteSql } from "./store/sqlite.js";

describe("gateway app (in process)", () => {
  let dir: string;
  let store: EnrollmentStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-app-"));
    store = await openEnrollmentStore({ db: openSqliteSql(path.join(dir, "enrollment.sqlite")) });
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const app = (readiness: ReadinessCheck[] = [], attempts = 30, logger: Logger = silentLogger) =>
    createGatewayApp({
      config: serverConfigSchema.parse({
        server: { public_url: "https://ai.example.com" },
        enrollment: { attempts_per_minute: attempts },
      }),
      paths: serverPaths(dir),
      enrollment: createEnrollmentService({ store }),
      logger,
      listenerMode: "loopback",
      publicUrl: () => "https://ai.example.com",
      readiness,
    });
  const post = (body: string, type = "application/json") => ({
    method: "POST",
    headers: { "content-type": type },
    body,
  });

  it("rate-limits enrollment attempts with 429 and Retry-After", async () => {
    const gateway = app([], 3);
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await gateway.request("/v1/enroll", post('{"code":"x"}'))).status);
    expect(statuses).toEqual([400, 400, 400, 429]);
    const limited = await gateway.request("/v1/enroll", post('{"code":"x"}'));
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("refuses non-JSON bodies with 415 and schema violations with 400", async () => {
    const gateway = app();
    expect(
      (await gateway.request("/v1/enroll", post("code=x", "application/x-www-form-urlencoded"))).status,
    ).toBe(415);
    const wrong = await gateway.request("/v1/enroll", post('{"code": 42}'));
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_request" });
    expect((await gateway.request("/v1/enroll", post("[]"))).status).toBe(400);
  });

  it("reports ready_degraded naming an optional dependency, and 503 for a critical one", async () => {
    const failing = async () => {
      throw new Error("down");
    };
    const degraded = await app([{ name: "memory", critical: false, check: failing }]).request("/ready");
    expect(degraded.status).toBe(200);
    expect(await degraded.json()).toEqual({ status: "ready_degraded", degraded: ["memory"], failed: [] });
    const down = await app([{ name: "context", critical: true, check: failing }]).request("/ready");
    expect(down.status).toBe(503);
  });

  it("puts every /v1 route except enrollment behind the bearer check", async () => {
    const gateway = app();
    const unknown = await gateway.request("/v1/anything");
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("cache-control")).toBe("no-store");
    const bad = await gateway.request("/v1/admin/status", {
      headers: { authorization: "Bearer ivoai_cred_nope" },
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain("invalid_token");
    // A token in the query string is never accepted.
    expect((await gateway.request("/v1/admin/status?access_token=ivoai_cred_nope")).status).toBe(401);
  });

  it("answers an IvoaiError thrown in any route with its code's status, and anything else with a logged 500", async () => {
    const lines: string[] = [];
    const gateway = app([], 30, createLogger({ write: (line) => lines.push(line) }));
    // A route mounted the way domain routes are, throwing what a store or service would.
    gateway.get("/boom/:code", (c) => {
      const code = c.req.param("code");
      if (code === "TypeError") throw new TypeError("cannot read properties of undefined (reading 'x')");
      throw new IvoaiError(code as IvoaiErrorCode, `thrown ${code}`);
    });
    const answer = async (code: string) => {
      const response = await gateway.request(`/boom/${code}`);
      return [response.status, await response.json()];
    };
    expect(await answer("NOT_FOUND")).toEqual([404, { error: "not_found", message: "thrown NOT_FOUND" }]);
    expect(await answer("CONFLICT")).toEqual([409, { error: "conflict", message: "thrown CONFLICT" }]);
    expect(await answer("USAGE")).toEqual([400, { error: "invalid_request", message: "thrown USAGE" }]);
    // Server-side failures keep their details (paths included) in the log, never in the answer, and never a
    // stack: unsafe paths and file permissions are the server's state, not the caller's fault.
    // The generic text names the request, so an operator finds the logged reason from what a caller reports.
    const generic = {
      error: "internal_error",
      message: expect.stringMatching(/^the server failed to handle the request \(request req_[0-9a-f]+\)$/),
    };
    expect(await answer("PERMISSION_DENIED")).toEqual([500, generic]);
    expect(await answer("UNSAFE_PATH")).toEqual([500, generic]);
    expect(await answer("STATE_CORRUPT")).toEqual([500, generic]);
    expect(await answer("TypeError")).toEqual([500, generic]);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const failures = logged.filter((line) => line.msg === "request failed");
    expect(failures.map((line) => line.error)).toEqual([
      "thrown PERMISSION_DENIED",
      "thrown UNSAFE_PATH",
      "thrown STATE_CORRUPT",
      "cannot read properties of undefined (reading 'x')",
    ]);
    expect(lines.join("")).not.toMatch(/at .*\.ts:\d+/);
  });
});
