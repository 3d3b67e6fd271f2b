import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../config/server-config.js";
import { serverPaths } from "../config/server-paths.js";
import { silentLogger } from "../shared/logger.js";
import { createGatewayApp } from "./app.js";
import { createEnrollmentService } from "./enrollment/service.js";
import { createEnrollmentStore, type EnrollmentStore } from "./enrollment/store.js";
import type { ReadinessCheck } from "./health/readiness.js";

describe("gateway app (in process)", () => {
  let dir: string;
  let store: EnrollmentStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-app-"));
    store = createEnrollmentStore({
      statePath: path.join(dir, "state.json"),
      lockPath: path.join(dir, "state.lock"),
    });
  });
  afterEach(async () => {
    store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const app = (readiness: ReadinessCheck[] = [], attempts = 30) =>
    createGatewayApp({
      config: serverConfigSchema.parse({
        server: { public_url: "https://ai.example.com" },
        enrollment: { attempts_per_minute: attempts },
      }),
      paths: serverPaths(dir),
      enrollment: createEnrollmentService({ store }),
      logger: silentLogger,
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
});
