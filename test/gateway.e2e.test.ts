// The built binary end to end: init → start → code → enroll → admin → revoke → 401, plus bad input and log hygiene.
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createCode,
  enroll,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

describe("gateway end to end", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  const secrets: string[] = [];

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
  });
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop();
    await cleanup();
  });

  it("serves discovery, health and readiness with no-store", async () => {
    const discovery = await fetch(`${server.url}/.well-known/ivoai`);
    expect(discovery.status).toBe(200);
    expect(discovery.headers.get("cache-control")).toBe("no-store");
    const doc = (await discovery.json()) as Record<string, unknown>;
    expect(doc.protocol_version).toBe(1);
    expect(doc.public_base_url).toBe(server.url);
    expect(doc.features).toMatchObject({
      remote_admin_read_only: true,
      context: true,
      memory: true,
      memory_hooks: true,
      web_mcp: true,
      oauth_pkce: true,
    });
    expect(await (await fetch(`${server.url}/health`)).json()).toEqual({ status: "alive" });
    const ready = await fetch(`${server.url}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { status: string }).status).toBe("ready");
  });

  it("enrolls with a single-use code, authorises admin reads and stops at revocation", async () => {
    const { id, code } = await createCode(root);
    secrets.push(code);
    expect(code).toMatch(/^ivoai_enr_[A-Za-z0-9_-]{43}$/);

    const first = await enroll(server.url, code);
    expect(first.status).toBe(201);
    expect(first.headers.get("cache-control")).toBe("no-store");
    const body = (await first.json()) as { client_id: string; credential: string; scopes: string[] };
    secrets.push(body.credential);
    expect(body.scopes).toEqual([
      "context:read",
      "memory:read",
      "memory:write",
      "status:read",
      "doctor:read",
      "connector:read",
    ]);

    const auth = { authorization: `Bearer ${body.credential}` };
    const status = await fetch(`${server.url}/v1/admin/status`, { headers: auth });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { caller: { id: string } }).caller.id).toBe(body.client_id);
    const doctor = (await (await fetch(`${server.url}/v1/admin/doctor`, { headers: auth })).json()) as {
      status: string;
      checks: { name: string; status: string }[];
    };
    expect(doctor.status).toBe("ok");
    expect(doctor.checks.find((check) => check.name === "secrets_dir")?.status).toBe("ok");
    expect(doctor.checks.find((check) => check.name === "enrollment_store")?.status).toBe("ok");
    expect(doctor.checks.find((check) => check.name === "store")).toMatchObject({ status: "ok" });
    expect(await (await fetch(`${server.url}/v1/admin/connectors`, { headers: auth })).json()).toEqual({
      connectors: [],
    });

    // The store (the database and its write-ahead log) keeps hashes only.
    const file = path.join(root, "var/lib/ivoai/enrollment/enrollment.sqlite");
    const state = (
      await Promise.all([file, `${file}-wal`].map((name) => readFile(name, "latin1").catch(() => "")))
    ).join("");
    expect(state).toContain(createHash("sha256").update(body.credential).digest("hex"));
    expect(state).not.toContain(code);
    expect(state).not.toContain(body.credential);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const list = await runIvoai(["server", "enrollment", "list", "--root", root, "--json"]);
    const codes = (
      JSON.parse(list.stdout) as { enrollments: { id: string; status: string; consumed_by: string }[] }
    ).enrollments;
    expect(codes.find((entry) => entry.id === id)).toMatchObject({
      status: "consumed",
      consumed_by: body.client_id,
    });
    expect(list.stdout).not.toContain(code);

    const revoke = await runIvoai(["server", "clients", "revoke", body.client_id, "--root", root]);
    expect(revoke.code).toBe(0);
    const after = await fetch(`${server.url}/v1/admin/status`, { headers: auth });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("gives one identical answer for invalid, expired, consumed and revoked codes", async () => {
    const consumed = await createCode(root);
    const revoked = await createCode(root);
    const expired = await createCode(root, ["--ttl", "1s"]);
    secrets.push(consumed.code, revoked.code, expired.code);
    expect((await enroll(server.url, consumed.code)).status).toBe(201);
    expect((await runIvoai(["server", "enrollment", "revoke", revoked.id, "--root", root])).code).toBe(0);
    const expiry = (
      JSON.parse((await runIvoai(["server", "enrollment", "list", "--root", root, "--json"])).stdout) as {
        enrollments: { id: string; expires_at: string }[];
      }
    ).enrollments;
    const expiresAt = Date.parse(expiry.find((entry) => entry.id === expired.id)?.expires_at ?? "");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now() + 50)));

    const answers = [];
    for (const code of [`ivoai_enr_${"A".repeat(43)}`, expired.code, consumed.code, revoked.code]) {
      const response = await enroll(server.url, code);
      answers.push({ status: response.status, body: await response.text() });
    }
    expect(answers[0]?.status).toBe(400);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  });

  it("answers bad requests with JSON errors and keeps serving", async () => {
    const oversized = await fetch(`${server.url}/v1/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: "x".repeat(5 * 1024 * 1024) }),
    });
    expect(oversized.status).toBe(413);
    expect(((await oversized.json()) as { error: string }).error).toBe("payload_too_large");

    const malformed = await fetch(`${server.url}/v1/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"code": ',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: "invalid_json" });

    const missing = await fetch(`${server.url}/v1/admin/status`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it("refuses a credential without the needed scope with 403", async () => {
    const { code } = await createCode(root, ["--scopes", "context:read"]);
    secrets.push(code);
    const { credential } = (await (await enroll(server.url, code)).json()) as { credential: string };
    secrets.push(credential);
    const response = await fetch(`${server.url}/v1/admin/status`, {
      headers: { authorization: `Bearer ${credential}` },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("www-authenticate")).toContain("insufficient_scope");
  });

  it("drains on SIGTERM, exits 0, and never logged a code or credential", async () => {
    const { code, signal } = await server.stop("SIGTERM");
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const logs = server.output();
    expect(logs).toContain('"msg":"request"');
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
