import { afterEach, describe, expect, it } from "vitest";
import { type StatusServer, type StatusSnapshot, startStatusServer } from "./status.js";

const snapshot: StatusSnapshot = {
  sources: [
    { alias: "docs", purpose: "context", state: "ok", detail: "" },
    { alias: "wiki", purpose: "memory", state: "unhealthy", detail: "connection refused" },
  ],
  executor: "codex",
  quota: [{ executor: "codex", window: "5h", used_percent: 42, resets_at: "2026-11-30T10:00:00Z" }],
  session_id: "ses_1",
  auto: null,
  selection: null,
};

let server: StatusServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("startStatusServer", () => {
  it("serves the snapshot on 127.0.0.1 to the bearer of its token", async () => {
    server = await startStatusServer(() => snapshot);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/status$/);
    const response = await fetch(server.url, { headers: { authorization: `Bearer ${server.token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual(snapshot);
  });

  it("refuses a missing or wrong token and other paths", async () => {
    server = await startStatusServer(() => snapshot);
    expect((await fetch(server.url)).status).toBe(401);
    expect((await fetch(server.url, { headers: { authorization: `Bearer ${server.token}x` } })).status).toBe(
      401,
    );
    const other = server.url.replace(/\/status$/, "/other");
    expect((await fetch(other, { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(404);
    const post = await fetch(server.url, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(post.status).toBe(404);
  });

  it("answers 500 without details when the snapshot fails, and serves the latest snapshot", async () => {
    let fail = true;
    server = await startStatusServer(async () => {
      if (fail) throw new Error("secret detail");
      return { ...snapshot, executor: "claude" };
    });
    const headers = { authorization: `Bearer ${server.token}` };
    const failed = await fetch(server.url, { headers });
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain("secret detail");
    fail = false;
    expect(((await (await fetch(server.url, { headers })).json()) as StatusSnapshot).executor).toBe("claude");
  });

  it("uses a fresh token per server", async () => {
    server = await startStatusServer(() => snapshot);
    const other = await startStatusServer(() => snapshot);
    try {
      expect(other.token).not.toBe(server.token);
      expect((await fetch(other.url, { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(
        401,
      );
    } finally {
      await other.close();
    }
  });
});
