// Issue 10 against the built server behind a trusted reverse proxy (127.0.0.0/8): rate limits keyed on the
// forwarded client, operators listing and revoking Web MCP clients and grants, consent guesses limited, one
// invalid_grant answer, canonical loopback redirects, and a 400 (not silence) for requests that cannot be parsed.
import { createHash } from "node:crypto";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIVATION_GUESSES_PER_MINUTE, ACTIVATION_GUESSES_PER_REQUEST } from "../src/server/oauth/routes.js";
import { openOAuthStore } from "../src/server/oauth/store.js";
import { openSqliteSql } from "../src/server/store/sqlite.js";
import { createCode, initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { obtainTokens, pkcePair, TEST_REDIRECT } from "./oauth-flow.js";

/** What the proxy adds to every request it forwards for the client at `address`. */
const via = (address: string, chain?: string) => ({
  "x-forwarded-proto": "https",
  "x-forwarded-for": chain ? `${chain}, ${address}` : address,
});

/** Writes raw bytes on a socket and returns the status line of the answer ("" if none came in 5 s). */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let received = "";
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.on("data", (chunk) => {
      received += chunk;
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received.split("\r\n")[0] ?? "");
    });
  });
}

describe("Web MCP and enrollment behind a trusted reverse proxy", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let issuer: string;

  const activation = async () =>
    (
      JSON.parse((await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout) as {
        code: string;
      }
    ).code;
  const register = (from: string, redirects: unknown[] = [TEST_REDIRECT]) =>
    fetch(`${issuer}/oauth/register`, {
      method: "POST",
      headers: { ...via(from), "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: redirects, client_name: "Hardening" }),
    });
  const authorizeUrl = (clientId: string, challenge: string) =>
    `${issuer}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: TEST_REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${issuer}/mcp`,
      state: "st",
    })}`;
  const formOf = (html: string) => {
    const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1] ?? "";
    return { request_id: value("request_id"), csrf_token: value("csrf_token") };
  };
  /** Opens a consent page for a new client of `from`; returns the form fields and the PKCE verifier. */
  const openConsent = async (from: string, clientId?: string) => {
    const id = clientId ?? ((await (await register(from)).json()) as { client_id: string }).client_id;
    const { verifier, challenge } = pkcePair();
    const page = await fetch(authorizeUrl(id, challenge), { headers: via(from), redirect: "manual" });
    expect(page.status).toBe(200);
    return { clientId: id, verifier, form: formOf(await page.text()) };
  };
  const submit = (from: string, form: Record<string, string>, activationCode: string) =>
    fetch(`${issuer}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { ...via(from), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...form, activation_code: activationCode, decision: "allow" }),
    });
  const codeOf = (response: Response) =>
    new URL(response.headers.get("location") as string).searchParams.get("code") as string;
  const token = (from: string, body: Record<string, string>) =>
    fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { ...via(from), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });
  const mcpCall = (from: string, accessToken: string) =>
    fetch(`${issuer}/mcp`, {
      method: "POST",
      headers: {
        ...via(from),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${accessToken}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
  const enrollFrom = (from: string, code: string, chain?: string) =>
    fetch(`${issuer}/v1/enroll`, {
      method: "POST",
      headers: { ...via(from, chain), "content-type": "application/json" },
      body: JSON.stringify({ code, client_name: "proxied" }),
    });

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root, ["--trusted-proxy", "127.0.0.0/8"]);
    server = await startServer(root);
    issuer = server.url;
  });
  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it("keys enrollment limits on the forwarded client, so one attacker does not lock out another", async () => {
    const attacker = "203.0.113.10";
    const statuses: number[] = [];
    // A client-written chain to the left of the proxy's entry changes nothing: the proxy's entry counts.
    for (let attempt = 0; attempt < 31; attempt += 1)
      statuses.push((await enrollFrom(attacker, `ivoai_enr_bad${attempt}`, `198.18.0.${attempt}`)).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(400));
    expect(statuses[30]).toBe(429);
    const { code } = await createCode(root);
    expect((await enrollFrom(attacker, code)).status).toBe(429);
    expect((await enrollFrom("203.0.113.11", code)).status).toBe(201);
    // The request log names the forwarded client, not the proxy.
    expect(server.output()).toContain('"remote":"203.0.113.11"');
  });

  it("keys registration limits on the forwarded client", async () => {
    const attacker = "203.0.113.20";
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 61; attempt += 1) statuses.push((await register(attacker)).status);
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(201));
    expect(statuses[60]).toBe(429);
    expect((await register("203.0.113.21")).status).toBe(201);
  });

  it("limits activation-code guesses per authorization request and per client address", async () => {
    const good = await activation();
    // Per request: after the allowed wrong guesses, even the right code is refused; the code is not spent.
    const guesser = "203.0.113.30";
    let { form } = await openConsent(guesser);
    for (let guess = 0; guess < ACTIVATION_GUESSES_PER_REQUEST; guess += 1) {
      const wrong = await submit(guesser, form, "ivoai_act_wrong");
      expect(wrong.status).toBe(400);
      form = formOf(await wrong.text());
    }
    const refused = await submit(guesser, form, good);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain("Too many wrong activation codes");
    const fresh = await openConsent(guesser);
    expect((await submit(guesser, fresh.form, good)).status).toBe(302);

    // Per address: wrong guesses spread over fresh requests add up.
    const spreader = "203.0.113.31";
    let spent = 0;
    while (spent < ACTIVATION_GUESSES_PER_MINUTE) {
      let current = (await openConsent(spreader)).form;
      for (
        let guess = 0;
        guess < ACTIVATION_GUESSES_PER_REQUEST && spent < ACTIVATION_GUESSES_PER_MINUTE;
        guess += 1
      ) {
        const wrong = await submit(spreader, current, "ivoai_act_wrong");
        expect(wrong.status).toBe(400);
        current = formOf(await wrong.text());
        spent += 1;
      }
    }
    const second = await activation();
    const blocked = await submit(spreader, (await openConsent(spreader)).form, second);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another client address is not affected, and the code was not spent by the refused attempt.
    expect((await submit("203.0.113.32", (await openConsent("203.0.113.32")).form, second)).status).toBe(302);
  });

  it("answers a malformed multipart consent form with 400", async () => {
    const response = await fetch(`${issuer}/oauth/authorize`, {
      method: "POST",
      headers: { ...via("203.0.113.40"), "content-type": "multipart/form-data; boundary=xyz" },
      body: '--xyz\r\nContent-Disposition: form-data; name="request_id"\r\n\r\nar_1\r\n--broken',
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("The form could not be read");
  });

  it("refuses redirect URIs that name loopback in a non-canonical form", async () => {
    for (const uri of [
      "http://127.1/cb",
      "http://0x7f000001/cb",
      "http://2130706433/cb",
      "http://0177.0.0.1/cb",
      "http://127.0.1/cb",
      "http://[::ffff:127.0.0.1]/cb",
    ]) {
      const response = await register("203.0.113.50", [uri]);
      expect(response.status, uri).toBe(400);
      expect(((await response.json()) as { error: string }).error, uri).toBe("invalid_redirect_uri");
    }
    // Text that reaches an operator's terminal (`server clients list`) carries no control characters.
    // Nor bidi overrides, which would reorder the name on the consent page.
    for (const name of ["ok\u001b[1A\u001b[2Kspoof", "ChatGPT \u202egnp.exe", "a\u2066b\u2069"]) {
      const escaping = await fetch(`${issuer}/oauth/register`, {
        method: "POST",
        headers: { ...via("203.0.113.50"), "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [TEST_REDIRECT], client_name: name }),
      });
      expect(escaping.status, name).toBe(400);
    }
    for (const uri of ["http://127.0.0.1:8123/cb", "http://[::1]/cb", "http://localhost:9/cb"])
      expect((await register("203.0.113.50", [uri])).status, uri).toBe(201);
  });

  it("refuses https redirect URIs not written in canonical form, so the consent page shows where it goes", async () => {
    for (const uri of [
      "https:evil.example",
      "https:\\\\evil.example\\cb",
      "HTTPS://evil.example/cb",
      "https://evil.example/a b",
    ]) {
      const response = await register("203.0.113.51", [uri]);
      const body = (await response.json()) as { error: string; error_description: string };
      expect([uri, response.status, body.error]).toEqual([uri, 400, "invalid_redirect_uri"]);
      expect(body.error_description, uri).toMatch(/canonical form: https:\/\/evil\.example\//);
    }
    const canonical = "https://good.example/cb";
    const registered = await register("203.0.113.51", [canonical]);
    expect(registered.status).toBe(201);
    expect(((await registered.json()) as { redirect_uris: string[] }).redirect_uris).toEqual([canonical]);
  });

  it("answers every invalid_grant failure of the token endpoint identically", async () => {
    const from = "203.0.113.60";
    const answers: unknown[] = [];
    const refuse = async (body: Record<string, string>) => {
      const response = await token(from, body);
      expect(response.status).toBe(400);
      answers.push(await response.json());
    };
    const first = await obtainTokens(issuer, await activation(), undefined, via(from));
    const other = await obtainTokens(issuer, await activation(), undefined, via(from));
    const exchange = (clientId: string, code: string, verifier: string, redirect = TEST_REDIRECT) => ({
      grant_type: "authorization_code",
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
    });
    const pending = await openConsent(from, first.client_id);
    const fresh = codeOf(await submit(from, pending.form, await activation()));
    await refuse(exchange(first.client_id, "ivoai_ac_unknown", pending.verifier)); // unknown code
    await refuse(exchange(first.client_id, fresh, pkcePair().verifier)); // PKCE fails
    await refuse(exchange(first.client_id, fresh, pending.verifier, "http://127.0.0.1:1/other")); // redirect
    await refuse(exchange(other.client_id, fresh, pending.verifier)); // another client's code
    await refuse(exchange(first.client_id, first.code, first.verifier)); // replayed code
    const expired = `ivoai_ac_${"e".repeat(43)}`;
    const store = await openOAuthStore(openSqliteSql(path.join(root, "var/lib/ivoai/oauth/oauth.sqlite")));
    await store.addCode({
      code_sha256: createHash("sha256").update(expired).digest("hex"),
      client_id: first.client_id,
      redirect_uri: TEST_REDIRECT,
      code_challenge: pkcePair().challenge,
      resource: `${issuer}/mcp`,
      scopes: ["context:read"],
      expires_at: new Date(Date.now() - 60_000).toISOString(),
      used_at: null,
    });
    await store.close();
    await refuse(exchange(first.client_id, expired, pkcePair().verifier)); // expired code
    const refresh = (clientId: string, refreshToken: string) => ({
      grant_type: "refresh_token",
      client_id: clientId,
      refresh_token: refreshToken,
    });
    await refuse(refresh(first.client_id, "ivoai_rt_unknown")); // unknown refresh token
    await refuse(refresh(first.client_id, other.tokens.refresh_token)); // another client's refresh token
    const rotated = await token(from, refresh(other.client_id, other.tokens.refresh_token));
    expect(rotated.status).toBe(200);
    await refuse(refresh(other.client_id, other.tokens.refresh_token)); // reused (family now revoked)
    const next = (await rotated.json()) as { refresh_token: string };
    await refuse(refresh(other.client_id, next.refresh_token)); // revoked with its family
    expect(answers).toHaveLength(10);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]).toMatchObject({ error: "invalid_grant" });
    // The server's log keeps the real reasons.
    for (const reason of ["pkce_failed", "code_replayed", "code_expired", "refresh_token_reused"])
      expect(server.output()).toContain(reason);
  });

  it("lists Web MCP clients and grants, and revokes a grant or a whole client on the next request", async () => {
    const from = "203.0.113.70";
    const first = await obtainTokens(issuer, await activation(), undefined, via(from));
    const second = await obtainTokens(issuer, await activation(), undefined, via(from));
    const list = await runIvoai(["server", "clients", "list", "--root", root, "--json"]);
    expect(list.code).toBe(0);
    const entries = (
      JSON.parse(list.stdout) as {
        clients: {
          kind: string;
          id: string;
          status: string;
          grants?: { id: string; status: string; scopes: string[]; expires_at: string }[];
        }[];
      }
    ).clients;
    const listed = entries.find((entry) => entry.id === first.client_id);
    expect(listed).toMatchObject({ kind: "oauth", status: "active" });
    const grant = listed?.grants?.[0];
    expect(listed?.grants).toHaveLength(1);
    expect(grant).toMatchObject({ status: "active", scopes: ["context:read", "memory:read"] });
    // An absolute lifetime of 90 days by default.
    const days = (Date.parse(grant?.expires_at ?? "") - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThanOrEqual(90);
    const text = await runIvoai(["server", "clients", "list", "--root", root]);
    expect(text.stdout).toContain(first.client_id);
    expect(text.stdout).toContain(grant?.id);
    // Metadata only: no token, code or hash of one.
    for (const secret of [first.tokens.access_token, first.tokens.refresh_token, first.code]) {
      const hash = createHash("sha256").update(secret).digest("hex");
      for (const output of [list.stdout, text.stdout]) {
        expect(output).not.toContain(secret);
        expect(output).not.toContain(hash);
      }
    }

    // Revoking a grant: its access token stops at once and its refresh token no longer refreshes.
    expect((await mcpCall(from, first.tokens.access_token)).status).toBe(200);
    const revokeGrant = await runIvoai([
      "server",
      "clients",
      "revoke",
      grant?.id ?? "",
      "--root",
      root,
      "--json",
    ]);
    expect(revokeGrant.code).toBe(0);
    expect(JSON.parse(revokeGrant.stdout)).toMatchObject({ kind: "grant", id: grant?.id, status: "revoked" });
    expect((await mcpCall(from, first.tokens.access_token)).status).toBe(401);
    const refreshed = await token(from, {
      grant_type: "refresh_token",
      client_id: first.client_id,
      refresh_token: first.tokens.refresh_token,
    });
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");

    // Revoking a client: every token it holds stops, and the client id is no longer known to the flows.
    expect((await mcpCall(from, second.tokens.access_token)).status).toBe(200);
    const revokeClient = await runIvoai(["server", "clients", "revoke", second.client_id, "--root", root]);
    expect(revokeClient.code).toBe(0);
    expect(revokeClient.stdout).toContain(`Web MCP client ${second.client_id}: revoked`);
    expect((await mcpCall(from, second.tokens.access_token)).status).toBe(401);
    const afterClient = await token(from, {
      grant_type: "refresh_token",
      client_id: second.client_id,
      refresh_token: second.tokens.refresh_token,
    });
    expect(afterClient.status).toBe(401);
    const relisted = (
      JSON.parse((await runIvoai(["server", "clients", "list", "--root", root, "--json"])).stdout) as {
        clients: { id: string; status: string; grants?: { status: string }[] }[];
      }
    ).clients;
    expect(relisted.find((entry) => entry.id === second.client_id)).toMatchObject({
      status: "revoked",
      grants: [{ status: "revoked" }],
    });
    const unknown = await runIvoai(["server", "clients", "revoke", "oc_nope", "--root", root]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("no Web MCP client with id oc_nope");
  });

  it("answers a missing, empty or invalid Host header with 400 instead of silence", async () => {
    const port = Number(new URL(issuer).port);
    for (const request of [
      "GET /health HTTP/1.0\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: exa mple.com\r\nConnection: close\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n",
      "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n",
    ]) {
      expect(await rawRequest(port, request), JSON.stringify(request)).toMatch(/^HTTP\/1\.[01] 400 /);
    }
    // The server still serves.
    expect((await fetch(`${issuer}/health`)).status).toBe(200);
  });
});

describe("rate limits without a trusted proxy", () => {
  it("ignore X-Forwarded-For from a source that is not a trusted proxy", async () => {
    const { dir: root, cleanup } = await tempDir();
    await initRoot(root);
    const server = await startServer(root);
    try {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 31; attempt += 1) {
        const response = await fetch(`${server.url}/v1/enroll`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-forwarded-for": `203.0.113.${attempt}` },
          body: JSON.stringify({ code: `ivoai_enr_bad${attempt}` }),
        });
        statuses.push(response.status);
      }
      expect(statuses[30]).toBe(429);
      expect(server.output()).not.toContain('"remote":"203.0.113.');
    } finally {
      await server.stop();
      await cleanup();
    }
  });
});
