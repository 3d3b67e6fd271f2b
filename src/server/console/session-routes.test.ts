import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import type { ConsoleSessionView } from "../../protocol/console-api.js";
import { silentLogger } from "../../shared/logger.js";
import { sha256Hex } from "../../shared/tokens.js";
import { createGatewayApp } from "../app.js";
import { type AuditLog, openAuditLog } from "../audit/store.js";
import { createEnrollmentService } from "../enrollment/service.js";
import { type EnrollmentStore, openEnrollmentStore } from "../enrollment/store.js";
import { openSqliteSql } from "../store/sqlite.js";
import { type ConsoleSite, loadConsoleSite } from "./static-site.js";
import { type ConsoleStore, openConsoleStore } from "./store.js";

const MINUTE = 60_000;

describe("console session routes (in process)", () => {
  let dir: string;
  let enrollment: EnrollmentStore;
  let store: ConsoleStore;
  let audit: AuditLog;
  let clock: Date;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-console-routes-"));
    enrollment = await openEnrollmentStore({ db: openSqliteSql(path.join(dir, "enrollment.sqlite")) });
    store = await openConsoleStore(openSqliteSql(path.join(dir, "console.sqlite")));
    audit = await openAuditLog(openSqliteSql(path.join(dir, "audit.sqlite")));
    clock = new Date("2026-12-01T10:00:00.000Z");
  });
  afterEach(async () => {
    await enrollment.close();
    await store.close();
    await audit.close();
    await rm(dir, { recursive: true, force: true });
  });

  const app = (publicUrl: string, consoleSite?: ConsoleSite, attempts = 30) =>
    createGatewayApp({
      config: serverConfigSchema.parse({
        server: { public_url: publicUrl },
        enrollment: { attempts_per_minute: attempts },
      }),
      paths: serverPaths(dir),
      enrollment: createEnrollmentService({ store: enrollment }),
      logger: silentLogger,
      listenerMode: "loopback",
      publicUrl: () => publicUrl,
      readiness: [],
      console: store,
      audit,
      ...(consoleSite ? { consoleSite } : {}),
      now: () => clock,
    });
  const signIn = async (gateway: ReturnType<typeof app>, base: string) => {
    const { code } = await store.createCode({ role: "viewer", name: "Eva", ttlMs: 10 * MINUTE, now: clock });
    return gateway.request(`${base}/v1/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
  };

  it("uses the __Host- cookie with Secure behind an https public URL, and only that cookie", async () => {
    const base = "https://ai.example.com";
    const gateway = app(base);
    const response = await signIn(gateway, base);
    expect(response.status).toBe(200);
    const header = response.headers.get("set-cookie") ?? "";
    const token = /^__Host-ivoai_console=([^;]+); /.exec(header)?.[1] ?? "";
    expect(header).toBe(
      `__Host-ivoai_console=${token}; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict; Secure`,
    );
    const read = (cookie: string) => gateway.request(`${base}/v1/console/session`, { headers: { cookie } });
    expect((await read(`__Host-ivoai_console=${token}`)).status).toBe(200);
    expect((await read(`ivoai_console=${token}`)).status).toBe(401);
  });

  it("ends an idle session at the configured idle end and moves the end with each request", async () => {
    const base = "http://127.0.0.1:8787";
    const gateway = app(base);
    const response = await signIn(gateway, base);
    const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const read = () => gateway.request(`${base}/v1/admin/status`, { headers: { cookie } });
    clock = new Date(clock.getTime() + 29 * MINUTE);
    expect((await read()).status).toBe(200);
    clock = new Date(clock.getTime() + 29 * MINUTE);
    expect((await read()).status).toBe(200);
    clock = new Date(clock.getTime() + 30 * MINUTE);
    const idle = await read();
    expect(idle.status).toBe(401);
    expect(((await idle.json()) as { error: string }).error).toBe("session_expired");
  });

  it("rate-limits sign-in attempts per source, a right code included once over the budget", async () => {
    const base = "http://127.0.0.1:8787";
    const gateway = app(base, undefined, 3);
    const wrong = () =>
      gateway.request(`${base}/v1/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code: "ivoai_con_guess" }),
      });
    expect([(await wrong()).status, (await wrong()).status, (await wrong()).status]).toEqual([401, 401, 401]);
    const limited = await signIn(gateway, base);
    expect(limited.status).toBe(429);
    expect(((await limited.json()) as { error: string }).error).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("lets an admin list every session (no token in sight) and revoke one (audited), refused to anyone else", async () => {
    const base = "http://127.0.0.1:8787";
    const gateway = app(base);
    const open = async (role: "viewer" | "admin", name: string) => {
      const { code } = await store.createCode({ role, name, ttlMs: 10 * MINUTE, now: clock });
      const response = await gateway.request(`${base}/v1/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code }),
      });
      const body = (await response.json()) as { csrf_token: string };
      const cookie = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
      return { cookie, csrf: body.csrf_token, token: cookie.split("=")[1] ?? "" };
    };
    const viewer = await open("viewer", "Eva");
    clock = new Date(clock.getTime() + MINUTE);
    const admin = await open("admin", "Ada");
    const list = (cookie: string) => gateway.request(`${base}/v1/console/sessions`, { headers: { cookie } });
    const listed = await list(admin.cookie);
    expect(listed.status).toBe(200);
    const text = await listed.text();
    expect(text).not.toContain(viewer.token);
    expect(text).not.toContain(admin.token);
    expect(text).not.toMatch(/sha256|token/);
    const { sessions } = JSON.parse(text) as { sessions: ConsoleSessionView[] };
    expect(sessions.map((s) => [s.name, s.role, s.state, s.current])).toEqual([
      ["Ada", "admin", "active", true],
      ["Eva", "viewer", "active", false],
    ]);
    const eva = sessions[1] as ConsoleSessionView;
    expect(eva.idle_expires_at).toBe(new Date(Date.parse(eva.last_seen_at) + 30 * MINUTE).toISOString());

    // A viewer is refused, and so is a bearer credential whatever it holds.
    expect((await list(viewer.cookie)).status).toBe(403);
    expect(
      (await gateway.request(`${base}/v1/console/sessions`, { headers: { authorization: "Bearer ivoai_x" } }))
        .status,
    ).toBe(401);
    const revoke = (who: { cookie: string; csrf: string }, id: string, csrf = who.csrf) =>
      gateway.request(`${base}/v1/console/sessions/${id}/revoke`, {
        method: "POST",
        headers: { cookie: who.cookie, "x-csrf-token": csrf },
      });
    expect((await revoke(viewer, eva.id)).status).toBe(403);
    expect((await revoke(admin, eva.id, "wrong")).status).toBe(403);
    expect(
      (await gateway.request(`${base}/v1/admin/status`, { headers: { cookie: viewer.cookie } })).status,
    ).toBe(200);
    const revoked = await revoke(admin, eva.id);
    expect(revoked.status).toBe(200);
    expect(((await revoked.json()) as ConsoleSessionView).state).toBe("revoked");
    // The viewer is signed out at the next request.
    expect(
      (await gateway.request(`${base}/v1/admin/status`, { headers: { cookie: viewer.cookie } })).status,
    ).toBe(401);
    expect((await revoke(admin, "cs_unknown")).status).toBe(404);
    expect((await revoke(admin, "..%2Fx")).status).toBe(400);

    // Recorded as every revocation is (refused attempts are not), naming who was signed out but no secret.
    const ada = sessions[0] as ConsoleSessionView;
    const events = await audit.list({ kind: "client_revoked" });
    expect(events).toEqual([
      expect.objectContaining({
        kind: "client_revoked",
        actor: `Ada (console) (console_${ada.id})`,
        detail: {
          target: "console_session",
          id: eva.id,
          name: "Eva",
          role: "viewer",
          actor_id: `console_${ada.id}`,
        },
      }),
    ]);
    const recorded = JSON.stringify(events);
    for (const secret of [viewer.token, admin.token, sha256Hex(viewer.token), sha256Hex(admin.token)])
      expect(recorded).not.toContain(secret);
  });

  it("answers 503 console_unavailable until the console was built", async () => {
    const gateway = app("http://127.0.0.1:8787", loadConsoleSite(undefined, path.join(dir, "no-console")));
    const response = await gateway.request("http://127.0.0.1:8787/console/");
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe("console_unavailable");
    expect(body.message).toContain("npm run build");
  });

  it("serves bundled files, compressing only what is worth it", async () => {
    const site = loadConsoleSite({
      "index.html": { encoding: "utf8", body: "<!doctype html><p>hi</p>" },
      "assets/app-1.css": {
        encoding: "utf8",
        body: "p{color:red}".repeat(100),
      },
      "assets/logo-1.png": {
        encoding: "base64",
        body: Buffer.from([137, 80, 78, 71]).toString("base64"),
      },
    });
    const gateway = app("http://127.0.0.1:8787", site);
    const css = await gateway.request("http://127.0.0.1:8787/console/assets/app-1.css", {
      headers: { "accept-encoding": "br;q=1, gzip;q=0.5" },
    });
    expect(css.headers.get("content-encoding")).toBe("gzip");
    const refused = await gateway.request("http://127.0.0.1:8787/console/assets/app-1.css", {
      headers: { "accept-encoding": "gzip;q=0" },
    });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(await refused.text()).toBe("p{color:red}".repeat(100));
    const png = await gateway.request("http://127.0.0.1:8787/console/assets/logo-1.png", {
      headers: { "accept-encoding": "gzip" },
    });
    expect(png.headers.get("content-encoding")).toBeNull();
    expect([...new Uint8Array(await png.arrayBuffer())]).toEqual([137, 80, 78, 71]);
  });
});
