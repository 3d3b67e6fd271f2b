import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../shared/logger.js";
import { openSqliteSql } from "../store/sqlite.js";
import { createOAuthRoutes } from "./routes.js";
import { type OAuthStore, openOAuthStore } from "./store.js";
import { INVALID_GRANT_DESCRIPTION } from "./token-failure.js";

const ISSUER = "http://127.0.0.1:8787";
const REDIRECT = "http://127.0.0.1:33418/callback";
const DAY = 86_400_000;

describe("refresh families with an absolute lifetime (in process, with a clock)", () => {
  let dir: string;
  let store: OAuthStore;
  let start: number;
  let clock: number;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-oauth-"));
    store = await openOAuthStore(openSqliteSql(path.join(dir, "oauth.sqlite")));
    start = Date.now();
    clock = start;
  });
  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const routes = (refreshFamilyTtlMs?: number) =>
    createOAuthRoutes({
      store,
      issuer: () => ISSUER,
      logger: silentLogger,
      now: () => new Date(clock),
      ...(refreshFamilyTtlMs ? { refreshFamilyTtlMs } : {}),
    });
  const form = (app: ReturnType<typeof routes>, url: string, body: Record<string, string>) =>
    app.request(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });

  /** Registers, consents and exchanges at the current clock; returns the client id and refresh token. */
  const login = async (app: ReturnType<typeof routes>) => {
    const registered = await app.request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const page = await (
      await app.request(
        `/oauth/authorize?${new URLSearchParams({
          response_type: "code",
          client_id,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          code_challenge_method: "S256",
          resource: `${ISSUER}/mcp`,
        })}`,
      )
    ).text();
    const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(page)?.[1] ?? "";
    const activation = `ivoai_act_${randomBytes(16).toString("hex")}`;
    await store.addActivationCode(
      activation,
      new Date(clock + 600_000).toISOString(),
      new Date(clock).toISOString(),
    );
    const consent = await form(app, "/oauth/authorize", {
      request_id: value("request_id"),
      csrf_token: value("csrf_token"),
      activation_code: activation,
      decision: "allow",
    });
    const code = new URL(consent.headers.get("location") as string).searchParams.get("code") as string;
    const tokens = await form(app, "/oauth/token", {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    return { client_id, refresh: ((await tokens.json()) as { refresh_token: string }).refresh_token };
  };
  const refresh = async (app: ReturnType<typeof routes>, clientId: string, token: string) => {
    const response = await form(app, "/oauth/token", {
      grant_type: "refresh_token",
      client_id: clientId,
      refresh_token: token,
    });
    const body = (await response.json()) as {
      refresh_token?: string;
      error?: string;
      error_description?: string;
    };
    return { status: response.status, body };
  };

  it("lets rotation keep a grant alive only until 90 days after consent by default", async () => {
    const app = routes();
    const { client_id, refresh: first } = await login(app);
    let current = first;
    // Rotating every 29 days keeps each refresh token fresh (30-day TTL) ...
    for (const day of [29, 58, 87]) {
      clock = start + day * DAY;
      const rotated = await refresh(app, client_id, current);
      expect(rotated.status, `day ${day}`).toBe(200);
      current = rotated.body.refresh_token as string;
    }
    // ... but not the grant: at day 90 it ends, whatever the last token says.
    clock = start + 90 * DAY + 1_000;
    const ended = await refresh(app, client_id, current);
    expect(ended.status).toBe(400);
    expect(ended.body).toEqual({ error: "invalid_grant", error_description: INVALID_GRANT_DESCRIPTION });
    const [grant] = (await store.listClients())[0]?.grants ?? [];
    expect(grant?.expires_at).toBe(new Date(start + 90 * DAY).toISOString());
  });

  it("follows the configured lifetime", async () => {
    const app = routes(2 * DAY);
    const { client_id, refresh: first } = await login(app);
    clock += DAY;
    const rotated = await refresh(app, client_id, first);
    expect(rotated.status).toBe(200);
    clock += DAY;
    expect((await refresh(app, client_id, rotated.body.refresh_token as string)).status).toBe(400);
  });
});
