// One wire policy on every HTTP surface: an OAuth endpoint and a console API route whose store fails answer the
// generic text naming the request id (in their own body shapes), never the failure's details, which go to the log.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../config/server-config.js";
import { serverPaths } from "../config/server-paths.js";
import { IvoaiError, type IvoaiErrorCode } from "../shared/errors.js";
import { createLogger } from "../shared/logger.js";
import { createGatewayApp } from "./app.js";
import { type AuditLog, openAuditLog } from "./audit/store.js";
import { type ConsoleStore, openConsoleStore } from "./console/store.js";
import { createEnrollmentService } from "./enrollment/service.js";
import { type EnrollmentStore, openEnrollmentStore } from "./enrollment/store.js";
import { type OAuthStore, openOAuthStore } from "./oauth/store.js";
import { openSqliteSql } from "./store/sqlite.js";

const BASE = "http://127.0.0.1:8787";
/** Details a failure carries that must never reach a caller: an absolute path and a database host. */
const SECRET_PATH = "/srv/ivoai/secret-state/oauth.sqlite";
const SECRET_HOST = "db.internal.example:5432";

/** The real store, except that the named methods throw `error` while `failing.on` is set. */
function failingStore<T extends object>(store: T, methods: readonly string[], error: () => Error) {
  const failing = { on: false };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      if (failing.on && methods.includes(String(key))) {
        return async () => {
          throw error();
        };
      }
      return value.bind(target);
    },
  });
  return { store: proxy as T, failing };
}

const thrown = (code: IvoaiErrorCode, message: string) => () => new IvoaiError(code, message);

describe("one wire error policy for OAuth and the console API (in process)", () => {
  let dir: string;
  let enrollment: EnrollmentStore;
  let oauth: OAuthStore;
  let consoleStore: ConsoleStore;
  let audit: AuditLog;
  let lines: Record<string, unknown>[];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-wire-errors-"));
    enrollment = await openEnrollmentStore({ db: openSqliteSql(path.join(dir, "enrollment.sqlite")) });
    oauth = await openOAuthStore(openSqliteSql(path.join(dir, "oauth.sqlite")));
    consoleStore = await openConsoleStore(openSqliteSql(path.join(dir, "console.sqlite")));
    audit = await openAuditLog(openSqliteSql(path.join(dir, "audit.sqlite")));
    lines = [];
  });
  afterEach(async () => {
    await Promise.all([enrollment.close(), oauth.close(), consoleStore.close(), audit.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  const gateway = (parts: { oauth?: OAuthStore; console?: ConsoleStore; audit?: AuditLog }) =>
    createGatewayApp({
      config: serverConfigSchema.parse({ server: { public_url: BASE } }),
      paths: serverPaths(dir),
      enrollment: createEnrollmentService({ store: enrollment }),
      logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
      listenerMode: "loopback",
      publicUrl: () => BASE,
      readiness: [],
      oauth: parts.oauth ?? oauth,
      console: parts.console ?? consoleStore,
      audit: parts.audit ?? audit,
    });

  /** The request id an answer names, checked against the log line that carries the failure's details. */
  const loggedFailure = (text: string, detail: string, code: IvoaiErrorCode) => {
    expect(text).not.toContain(detail);
    const requestId = /\(request (req_[0-9a-f]+)\)/.exec(text)?.[1];
    expect(requestId, `no request id in ${text}`).toBeDefined();
    const logged = lines.find((line) => line.msg === "request failed" && line.request_id === requestId);
    expect(logged, `no log line for ${requestId} in ${JSON.stringify(lines)}`).toMatchObject({
      error_code: code,
      error: expect.stringContaining(detail),
    });
  };

  it("answers an OAuth endpoint's internal failure as RFC 6749 JSON with the generic text and the request id", async () => {
    const broken = failingStore(
      oauth,
      ["getClient", "addClient"],
      thrown("STATE_CORRUPT", `corrupt ${SECRET_PATH}`),
    );
    const app = gateway({ oauth: broken.store });
    broken.failing.on = true;
    const token = await app.request(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=authorization_code&client_id=oc_x&code=x",
    });
    expect(token.status).toBe(500);
    const body = (await token.json()) as Record<string, string>;
    expect(body).toEqual({
      error: "server_error",
      error_description: expect.stringMatching(
        /^the server failed to handle the request \(request req_\w+\)$/,
      ),
    });
    loggedFailure(body.error_description ?? "", SECRET_PATH, "STATE_CORRUPT");

    const register = await app.request(`${BASE}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: ["https://client.example/cb"] }),
    });
    expect(register.status).toBe(500);
    const registered = (await register.json()) as Record<string, string>;
    expect(registered.error).toBe("server_error");
    loggedFailure(registered.error_description ?? "", SECRET_PATH, "STATE_CORRUPT");

    // The consent flow is a person's browser: the same text, as a page.
    const page = await app.request(
      `${BASE}/oauth/authorize?client_id=oc_x&redirect_uri=https://client.example/cb`,
    );
    expect(page.status).toBe(500);
    expect(page.headers.get("content-type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain("the server failed to handle the request (request req_");
    loggedFailure(html, SECRET_PATH, "STATE_CORRUPT");
  });

  it("answers an unavailable store on OAuth as temporarily_unavailable, never naming the database", async () => {
    const down = failingStore(
      oauth,
      ["getClient"],
      thrown("STORE_UNAVAILABLE", `PostgreSQL is not reachable: ${SECRET_HOST}`),
    );
    const app = gateway({ oauth: down.store });
    down.failing.on = true;
    const token = await app.request(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token&client_id=oc_x&refresh_token=x",
    });
    expect(token.status).toBe(503);
    const body = (await token.json()) as Record<string, string>;
    expect(body.error).toBe("temporarily_unavailable");
    expect(body.error_description).toMatch(
      /^the server's store is unavailable; try again shortly \(request req_\w+\)$/,
    );
    loggedFailure(body.error_description ?? "", SECRET_HOST, "STORE_UNAVAILABLE");
  });

  it("answers the console API's internal failures (its cookie auth and a route) with the generic text and the request id", async () => {
    const sessions = failingStore(
      consoleStore,
      ["findSession"],
      thrown("STORE_UNAVAILABLE", `PostgreSQL is not reachable: ${SECRET_HOST}`),
    );
    const events = failingStore(audit, ["list"], thrown("STATE_CORRUPT", `corrupt ${SECRET_PATH}`));
    const app = gateway({ console: sessions.store, audit: events.store });
    const { code } = await consoleStore.createCode({
      role: "viewer",
      name: "Eva",
      ttlMs: 600_000,
      now: new Date(),
    });
    const signedIn = await app.request(`${BASE}/v1/console/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    expect(signedIn.status).toBe(200);
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0] ?? "";

    // A route of the console API whose store is corrupt.
    events.failing.on = true;
    const listed = await app.request(`${BASE}/v1/audit/events`, { headers: { cookie } });
    expect(listed.status).toBe(500);
    const problem = (await listed.json()) as Record<string, string>;
    expect(problem).toEqual({
      error: "internal_error",
      message: expect.stringMatching(/^the server failed to handle the request \(request req_\w+\)$/),
    });
    loggedFailure(problem.message ?? "", SECRET_PATH, "STATE_CORRUPT");

    // The console API's own cookie check, with the session store down.
    sessions.failing.on = true;
    const overview = await app.request(`${BASE}/v1/admin/overview`, { headers: { cookie } });
    expect(overview.status).toBe(503);
    const unavailable = (await overview.json()) as Record<string, string>;
    expect(unavailable.error).toBe("store_unavailable");
    expect(unavailable.message).toMatch(
      /^the server's store is unavailable; try again shortly \(request req_\w+\)$/,
    );
    loggedFailure(unavailable.message ?? "", SECRET_HOST, "STORE_UNAVAILABLE");
  });
});
