// The web console's sign-in as a person uses it: a code from `ivoai server console login` becomes a session
// cookie, mutations need the CSRF token, the cookie never works as an agent credential, and /console is served
// from the binary with a strict CSP.
import { readdir, readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsoleSession } from "../src/protocol/console-api.js";
import { consoleLogin, consoleSession, setIdleTimeout, signIn, tokenOf } from "./console-helpers.js";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { MCP_INITIALIZE } from "./raw-http.js";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The status of a GET carrying this Host header (fetch cannot set one). */
function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
      .on("error", reject);
  });
}

describe("web console sign-in", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  const secrets: string[] = [];

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-console-"));
    await initRoot(root);
    server = await startServer(root);
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  it("exchanges a single-use code from the CLI for an HttpOnly SameSite=Strict cookie", async () => {
    // Lifetimes are checked between the clock before a call and after it, however long a busy host takes.
    const beforeLogin = Date.now();
    const created = await consoleLogin(root, "--role", "approver", "--name", "Ana Lima", "--ttl", "5m");
    secrets.push(created.code);
    expect(created).toMatchObject({ role: "approver", name: "Ana Lima" });
    expect(created.scopes).toContain("approvals:decide");
    expect(created.url).toBe(`${server.url}/console/#code=${created.code}`);
    const codeEnd = Date.parse(created.expires_at);
    expect(codeEnd).toBeGreaterThanOrEqual(beforeLogin + 5 * 60_000 - 1_000);
    expect(codeEnd).toBeLessThanOrEqual(Date.now() + 5 * 60_000);

    const beforeSignIn = Date.now();
    const response = await signIn(server.url, JSON.stringify({ code: created.code }));
    const afterSignIn = Date.now();
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const token = tokenOf(response);
    secrets.push(token);
    // The absolute end (12 h by default) is the cookie's lifetime; no Secure on plain loopback http.
    expect(response.headers.get("set-cookie")).toBe(
      `ivoai_console=${token}; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict`,
    );
    const body = (await response.json()) as ConsoleSession;
    expect(body).toMatchObject({ name: "Ana Lima", role: "approver" });
    expect(body.scopes).toEqual(expect.arrayContaining(["approvals:read", "approvals:decide", "audit:read"]));
    expect(body.scopes).not.toContain("clients:revoke");
    expect(body.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(body.expires_at)).toBeGreaterThanOrEqual(beforeSignIn + 12 * 3_600_000 - 1_000);
    expect(Date.parse(body.expires_at)).toBeLessThanOrEqual(afterSignIn + 12 * 3_600_000);
    expect(Date.parse(body.idle_expires_at)).toBeLessThanOrEqual(afterSignIn + 30 * 60_000);

    // Single use: the same code again is the one generic refusal, as is a code that never existed.
    const again = await signIn(server.url, JSON.stringify({ code: created.code }));
    expect(again.status).toBe(401);
    const refusal = await again.json();
    expect(refusal).toEqual({
      error: "invalid_code",
      message: "the sign-in code is invalid, used or expired",
    });
    const unknown = await signIn(server.url, JSON.stringify({ code: "ivoai_con_nope" }));
    expect(await unknown.json()).toEqual(refusal);

    // The cookie alone reads the session back, with the same CSRF token.
    const read = await fetch(`${server.url}/v1/console/session`, {
      headers: { cookie: `ivoai_console=${token}` },
    });
    expect(read.status).toBe(200);
    expect(((await read.json()) as ConsoleSession).csrf_token).toBe(body.csrf_token);
    const none = await fetch(`${server.url}/v1/console/session`);
    expect(none.status).toBe(401);
  });

  it("authenticates the console's API by cookie and refuses mutations without the session's CSRF token", async () => {
    const first = await consoleSession(server.url, root, "--role", "approver");
    const second = await consoleSession(server.url, root, "--role", "approver");
    secrets.push(first.token, second.token);
    const cookie = { cookie: `ivoai_console=${second.token}` };

    const status = await fetch(`${server.url}/v1/admin/status`, { headers: cookie });
    expect(status.status).toBe(200);
    const approvals = await fetch(`${server.url}/v1/approvals`, { headers: cookie });
    expect(approvals.status).toBe(200);

    const decide = (headers: Record<string, string>) =>
      fetch(`${server.url}/v1/approvals/apr_missing/approve`, {
        method: "POST",
        headers: { ...cookie, "content-type": "application/json", ...headers },
        body: "{}",
      });
    const missing = await decide({});
    expect(missing.status).toBe(403);
    expect(((await missing.json()) as { error: string }).error).toBe("csrf_failed");
    // Another session's token (a stale one from before signing in again) does not fit this cookie.
    const stale = await decide({ "x-csrf-token": first.body.csrf_token });
    expect(stale.status).toBe(403);
    expect(((await stale.json()) as { error: string }).error).toBe("csrf_failed");
    // With its own token the request passes authentication and reaches the gate (no such approval).
    const valid = await decide({ "x-csrf-token": second.body.csrf_token });
    expect(valid.status).toBe(404);
    expect(((await valid.json()) as { error: string }).error).toBe("not_found");

    // A viewer's session cannot decide, CSRF or not.
    const viewer = await consoleSession(server.url, root, "--role", "viewer");
    secrets.push(viewer.token);
    const refused = await fetch(`${server.url}/v1/approvals/apr_missing/approve`, {
      method: "POST",
      headers: {
        cookie: `ivoai_console=${viewer.token}`,
        "x-csrf-token": viewer.body.csrf_token,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: string }).error).toBe("insufficient_scope");
  });

  it("never takes the cookie as an agent credential: MCP, hooks and enrollment need a bearer", async () => {
    const admin = await consoleSession(server.url, root, "--role", "admin");
    secrets.push(admin.token);
    const headers = {
      cookie: `ivoai_console=${admin.token}`,
      "x-csrf-token": admin.body.csrf_token,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    for (const endpoint of ["/v1/mcp/context", "/v1/memory/mcp"]) {
      const response = await fetch(`${server.url}${endpoint}`, {
        method: "POST",
        headers,
        body: MCP_INITIALIZE,
      });
      expect(response.status, endpoint).toBe(401);
      expect(((await response.json()) as { error: string }).error).toBe("unauthorized");
    }
    const events = await fetch(`${server.url}/v1/memory/events`, { headers });
    expect(events.status).toBe(401);
  });

  it("ends a session revoked from the CLI or signed out, clearing the cookie", async () => {
    const revoked = await consoleSession(server.url, root, "--name", "Rui");
    secrets.push(revoked.token);
    const listed = await runIvoai(["server", "console", "sessions", "--root", root, "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(revoked.token);
    const rows = (JSON.parse(listed.stdout) as { sessions: { id: string; name: string; status: string }[] })
      .sessions;
    const row = rows.find((entry) => entry.name === "Rui");
    expect(row?.status).toBe("active");
    expect(Object.keys(row ?? {}).join(" ")).not.toMatch(/token|hash|csrf/);

    const revoke = await runIvoai(["server", "console", "revoke", row?.id ?? "", "--root", root, "--json"]);
    expect(revoke.code).toBe(0);
    const after = await fetch(`${server.url}/v1/admin/status`, {
      headers: { cookie: `ivoai_console=${revoked.token}` },
    });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: string }).error).toBe("session_expired");
    expect(after.headers.get("set-cookie")).toBe(
      "ivoai_console=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
    );

    const out = await consoleSession(server.url, root);
    secrets.push(out.token);
    const cookie = `ivoai_console=${out.token}`;
    const noCsrf = await fetch(`${server.url}/v1/console/session`, { method: "DELETE", headers: { cookie } });
    expect(noCsrf.status).toBe(403);
    const signOut = await fetch(`${server.url}/v1/console/session`, {
      method: "DELETE",
      headers: { cookie, "x-csrf-token": out.body.csrf_token },
    });
    expect(signOut.status).toBe(204);
    expect(signOut.headers.get("set-cookie")).toBe(
      "ivoai_console=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict",
    );
    const gone = await fetch(`${server.url}/v1/console/session`, { headers: { cookie } });
    expect(gone.status).toBe(401);
  });

  it("ends the browser's older session when it signs in again", async () => {
    const first = await consoleSession(server.url, root, "--name", "Eva");
    secrets.push(first.token);
    const { code } = await consoleLogin(root, "--name", "Eva");
    const again = await signIn(server.url, JSON.stringify({ code }), {
      cookie: `ivoai_console=${first.token}`,
    });
    expect(again.status).toBe(200);
    const second = tokenOf(again);
    secrets.push(second);
    expect(second).not.toBe(first.token);
    const old = await fetch(`${server.url}/v1/console/session`, {
      headers: { cookie: `ivoai_console=${first.token}` },
    });
    expect(old.status).toBe(401);
    const current = await fetch(`${server.url}/v1/console/session`, {
      headers: { cookie: `ivoai_console=${second}` },
    });
    expect(current.status).toBe(200);
  });

  it("checks the CLI's flags (exit 2) and revokes every session with --all", async () => {
    for (const args of [
      ["--role", "root"],
      ["--ttl", "2d"],
      ["--ttl", "soon"],
      ["--name", "<script>"],
    ]) {
      const result = await runIvoai(["server", "console", "login", "--root", root, ...args]);
      expect(result.code, args.join(" ")).toBe(2);
    }
    expect((await runIvoai(["server", "console", "revoke", "--root", root])).code).toBe(2);
    expect((await runIvoai(["server", "console", "revoke", "cs_x", "--all", "--root", root])).code).toBe(2);
    expect((await runIvoai(["server", "console", "revoke", "cs_unknown", "--root", root])).code).toBe(1);
    const live = await consoleSession(server.url, root);
    secrets.push(live.token);
    const all = await runIvoai(["server", "console", "revoke", "--all", "--root", root, "--json"]);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { revoked: number }).revoked).toBeGreaterThanOrEqual(1);
    const after = await fetch(`${server.url}/v1/console/session`, {
      headers: { cookie: `ivoai_console=${live.token}` },
    });
    expect(after.status).toBe(401);
  });

  it("refuses a foreign Origin and malformed or oversized sign-in bodies with JSON errors", async () => {
    const { code } = await consoleLogin(root);
    secrets.push(code);
    const foreign = await signIn(server.url, JSON.stringify({ code }), { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await foreign.json()) as object).toHaveProperty("error");
    const cases: [string, Record<string, string>, number, string][] = [
      ["{not json", {}, 400, "invalid_json"],
      [JSON.stringify({ code, extra: 1 }), {}, 400, "invalid_request"],
      [JSON.stringify({ code: "x".repeat(2000) }), {}, 413, "payload_too_large"],
      [JSON.stringify({ code }), { "content-type": "text/plain" }, 415, "unsupported_media_type"],
    ];
    for (const [body, headers, status, error] of cases) {
      const response = await signIn(server.url, body, headers);
      expect(response.status, error).toBe(status);
      expect(((await response.json()) as { error: string }).error).toBe(error);
    }
    // The code survived all of that (never spent by a refused request).
    expect((await signIn(server.url, JSON.stringify({ code }))).status).toBe(200);
  });

  it("serves the console with a strict CSP, SPA fallback, immutable gzip assets and ETags", async () => {
    const redirect = await fetch(`${server.url}/`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe("/console/");

    const index = await readFile(path.resolve("dist/console/index.html"), "utf8");
    for (const route of ["/console", "/console/", "/console/approvals", "/console/knowledge/pages/x"]) {
      const response = await fetch(`${server.url}${route}`);
      expect(response.status, route).toBe(200);
      expect(response.headers.get("content-security-policy")).toBe(CSP);
      expect(response.headers.get("x-frame-options")).toBe("DENY");
      expect(response.headers.get("referrer-policy")).toBe("no-referrer");
      expect(response.headers.get("x-content-type-options")).toBe("nosniff");
      expect(response.headers.get("cache-control")).toBe("no-store");
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await response.text()).toBe(index);
    }

    const [script] = (await readdir(path.resolve("dist/console/assets"))).filter((name) =>
      name.endsWith(".js"),
    );
    const source = await readFile(path.resolve(`dist/console/assets/${script}`), "utf8");
    const asset = await fetch(`${server.url}/console/assets/${script}`, {
      headers: { "accept-encoding": "gzip" },
    });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-encoding")).toBe("gzip");
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("content-security-policy")).toBe(CSP);
    expect(await asset.text()).toBe(source);
    const etag = asset.headers.get("etag") ?? "";
    expect(etag).toMatch(/^".+"$/);
    const cached = await fetch(`${server.url}/console/assets/${script}`, {
      headers: { "accept-encoding": "gzip", "if-none-match": etag },
    });
    expect(cached.status).toBe(304);
    const plain = await fetch(`${server.url}/console/assets/${script}`, {
      headers: { "accept-encoding": "identity" },
    });
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(Number(plain.headers.get("content-length"))).toBe(Buffer.byteLength(source));

    const missing = await fetch(`${server.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-security-policy")).toBe(CSP);
    // DNS rebinding: a foreign Host gets nothing of the console either.
    expect(await statusWithHost(`${server.url}/console/`, "evil.example")).toBe(403);
    const discovery = (await (await fetch(`${server.url}/.well-known/ivoai`)).json()) as {
      features: Record<string, boolean>;
    };
    expect(discovery.features.web_console).toBe(true);
  });

  it("never writes a code or a session token to the server log", () => {
    expect(secrets.length).toBeGreaterThan(5);
    const log = server.output();
    expect(log).toContain("console session opened");
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});

describe("web console idle timeout", () => {
  it("ends a session that saw no request for the configured idle time", async () => {
    const { dir: root, cleanup } = await tempDir("ivoai-console-idle-");
    let server: RunningServer | undefined;
    try {
      await initRoot(root);
      await setIdleTimeout(root, "1s");
      server = await startServer(root);
      const { token } = await consoleSession(server.url, root);
      const cookie = { cookie: `ivoai_console=${token}` };
      expect((await fetch(`${server.url}/v1/console/session`, { headers: cookie })).status).toBe(200);
      // Time has to pass for an idle timeout: wait just past it.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const idle = await fetch(`${server.url}/v1/console/session`, { headers: cookie });
      expect(idle.status).toBe(401);
      expect(((await idle.json()) as { error: string }).error).toBe("session_expired");
    } finally {
      await server?.stop();
      await cleanup();
    }
  });
});
