// Web MCP and its OAuth 2.1 authorization server, end to end against the built server: the acceptance
// checklist of the issue, driven by raw HTTP and by the official MCP SDK client's OAuth support.
import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openOAuthStore } from "../src/server/oauth/store.js";
import { openSqliteSql } from "../src/server/store/sqlite.js";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { answerConsent, obtainTokens, pkcePair, TEST_REDIRECT } from "./oauth-flow.js";

const REDIRECT = TEST_REDIRECT;

describe("Web MCP with OAuth 2.1", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let issuer: string;
  const secrets: string[] = [];

  const activation = async () => {
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    secrets.push(code);
    return code;
  };
  const register = async (redirects: unknown[] = [REDIRECT], name = "Test Connector") =>
    fetch(`${issuer}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: redirects, client_name: name, logo_uri: null, software_id: "x" }),
    });
  const pkce = pkcePair;
  const authorizeUrl = (clientId: string, challenge: string, extra: Record<string, string> = {}) =>
    `${issuer}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${issuer}/mcp`,
      state: "st-123",
      ...extra,
    })}`;
  const consent = (url: string, code: string, decision = "allow") =>
    answerConsent(issuer, url, code, decision);
  const token = (body: Record<string, string>) =>
    fetch(`${issuer}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });
  /** Register, consent and exchange: returns the client id and its tokens. */
  const login = async (scope?: string) => {
    const result = await obtainTokens(issuer, await activation(), scope);
    secrets.push(result.code, result.tokens.access_token, result.tokens.refresh_token);
    return result;
  };
  const mcpCall = (
    accessToken: string | undefined,
    body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" },
    query = "",
  ) =>
    fetch(`${issuer}/mcp${query}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    issuer = server.url;
  });
  afterAll(async () => {
    await server.stop();
    await cleanup();
  });

  it("publishes protected-resource and authorization-server metadata", async () => {
    for (const url of [
      `${issuer}/.well-known/oauth-protected-resource/mcp`,
      `${issuer}/.well-known/oauth-protected-resource`,
    ]) {
      expect(await (await fetch(url)).json()).toMatchObject({
        resource: `${issuer}/mcp`,
        authorization_servers: [issuer],
        scopes_supported: ["context:read", "memory:read", "memory:write", "memory:delete"],
      });
    }
    const metadata = (await (
      await fetch(`${issuer}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer,
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    });
    expect(String(metadata.issuer).endsWith("/")).toBe(false);
    for (const key of [
      "authorization_endpoint",
      "token_endpoint",
      "registration_endpoint",
      "revocation_endpoint",
    ]) {
      expect(String(metadata[key]).startsWith(issuer)).toBe(true);
    }
    expect(JSON.stringify(metadata.scopes_supported)).not.toMatch(/openid|email|profile|offline_access/);
    const discovery = (await (await fetch(`${issuer}/.well-known/ivoai`)).json()) as {
      features: Record<string, boolean>;
    };
    expect(discovery.features).toMatchObject({ web_mcp: true, oauth_pkce: true });
  });

  it("registers clients with https or loopback redirects only", async () => {
    for (const uri of [
      "https://chatgpt.com/connector/oauth/abc123",
      "https://chatgpt.com/connector_platform_oauth_redirect",
      "https://claude.ai/api/mcp/auth_callback",
      "https://claude.com/api/mcp/auth_callback",
      "http://127.0.0.1:9999/cb",
      "http://localhost/cb",
    ]) {
      expect((await register([uri])).status, uri).toBe(201);
    }
    for (const uri of [
      "https://x.example/cb#frag",
      "https://user:pw@x.example/cb",
      "ftp://x.example/cb",
      "http://x.example/cb",
      "javascript:alert(1)",
    ]) {
      const response = await register([uri]);
      expect(response.status, uri).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe("invalid_redirect_uri");
    }
  });

  it("answers missing, invalid and query-string tokens with 401 and the resource metadata", async () => {
    const none = await mcpCall(undefined);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${issuer}/.well-known/oauth-protected-resource/mcp"`,
    );
    const { tokens } = await login();
    expect((await mcpCall(undefined, undefined, `?access_token=${tokens.access_token}`)).status).toBe(401);
    const bogus = await mcpCall("ivoai_at_bogus");
    expect(bogus.status).toBe(401);
    expect(bogus.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await mcpCall(tokens.access_token)).status).toBe(200);
    // DNS-rebinding protection: a page from a foreign origin is refused even with a valid token.
    const foreignOrigin = await fetch(`${issuer}/mcp`, {
      method: "POST",
      headers: {
        origin: "https://evil.example",
        authorization: `Bearer ${tokens.access_token}`,
        "content-type": "application/json",
      },
      body: "{}",
    });
    expect(foreignOrigin.status).toBe(403);
    // A token bound to another resource is refused.
    const store = await openOAuthStore(openSqliteSql(path.join(root, "var/lib/ivoai/oauth/oauth.sqlite")));
    const foreign = `ivoai_at_${"z".repeat(43)}`;
    await store.addToken({
      token_sha256: createHash("sha256").update(foreign).digest("hex"),
      kind: "access",
      family: "fam_x",
      client_id: "oc_x",
      scopes: ["context:read"],
      resource: "https://elsewhere.example/mcp",
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      revoked_at: null,
      used_at: null,
      code_sha256: null,
    });
    // A valid token for this resource whose scopes include none of /mcp's: 403 insufficient_scope.
    const narrow = `ivoai_at_${"n".repeat(43)}`;
    await store.addToken({
      token_sha256: createHash("sha256").update(narrow).digest("hex"),
      kind: "access",
      family: "fam_y",
      client_id: "oc_y",
      scopes: ["status:read"],
      resource: `${issuer}/mcp`,
      expires_at: new Date(Date.now() + 60_000).toISOString(),
      revoked_at: null,
      used_at: null,
      code_sha256: null,
    });
    await store.close();
    expect((await mcpCall(foreign)).status).toBe(401);
    const insufficient = await mcpCall(narrow);
    expect(insufficient.status).toBe(403);
    expect(insufficient.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });

  it("keeps errors before a trusted redirect on a page, and returns state and iss with later ones", async () => {
    const { client_id } = (await (await register()).json()) as { client_id: string };
    const { challenge } = pkce();
    const unknown = await fetch(authorizeUrl("oc_nope", challenge), { redirect: "manual" });
    expect(unknown.status).toBe(400);
    expect(unknown.headers.get("location")).toBeNull();
    const wrongRedirect = await fetch(
      authorizeUrl(client_id, challenge, { redirect_uri: "https://evil.example/cb" }),
      { redirect: "manual" },
    );
    expect(wrongRedirect.status).toBe(400);
    expect(wrongRedirect.headers.get("location")).toBeNull();
    const back = async (extra: Record<string, string>) => {
      const response = await fetch(authorizeUrl(client_id, challenge, extra), { redirect: "manual" });
      expect(response.status).toBe(302);
      return new URL(response.headers.get("location") as string).searchParams;
    };
    const noPkce = await back({ code_challenge_method: "plain" });
    expect([noPkce.get("error"), noPkce.get("state"), noPkce.get("iss")]).toEqual([
      "invalid_request",
      "st-123",
      issuer,
    ]);
    expect((await back({ resource: "https://other.example/mcp" })).get("error")).toBe("invalid_target");
    const denied = await consent(authorizeUrl(client_id, challenge), "", "deny");
    const params = new URL(denied.headers.get("location") as string).searchParams;
    expect([params.get("error"), params.get("state"), params.get("iss")]).toEqual([
      "access_denied",
      "st-123",
      issuer,
    ]);
    const wrongCode = await consent(authorizeUrl(client_id, challenge), "ivoai_act_wrong");
    expect(wrongCode.status).toBe(400);
    expect(await wrongCode.text()).toContain("activation code is not valid");
    // Every page refuses framing, and no form-action rule blocks the redirect that follows the form.
    expect(wrongCode.headers.get("x-frame-options")).toBe("DENY");
    const page = await fetch(authorizeUrl(client_id, challenge));
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("content-security-policy")).not.toContain("form-action");
  });

  it("does not let a wrong verifier burn a code, nor a bad scope burn a refresh token", async () => {
    const { client_id } = (await (await register()).json()) as { client_id: string };
    const { verifier, challenge } = pkce();
    const answer = await consent(authorizeUrl(client_id, challenge), await activation());
    const code = new URL(answer.headers.get("location") as string).searchParams.get("code") as string;
    secrets.push(code);
    const base = { grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id };
    expect((await token({ ...base, code_verifier: pkce().verifier })).status).toBe(400);
    const good = await token({ ...base, code_verifier: verifier });
    expect(good.status).toBe(200);
    const tokens = (await good.json()) as { access_token: string; refresh_token: string };
    secrets.push(tokens.access_token, tokens.refresh_token);
    const wider = await token({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id,
      scope: "memory:delete",
    });
    expect(((await wider.json()) as { error: string }).error).toBe("invalid_scope");
    const refreshed = await token({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string };
    secrets.push(next.access_token, next.refresh_token);
  });

  it("issues single-use codes, rotates refresh tokens and revokes families on reuse", async () => {
    const first = await login();
    const replay = await token({
      grant_type: "authorization_code",
      code: first.code,
      redirect_uri: REDIRECT,
      client_id: first.client_id,
      code_verifier: first.verifier,
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await mcpCall(first.tokens.access_token)).status).toBe(401);

    const second = await login();
    const refreshed = await token({
      grant_type: "refresh_token",
      refresh_token: second.tokens.refresh_token,
      client_id: second.client_id,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get("cache-control")).toBe("no-store");
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string };
    secrets.push(next.access_token, next.refresh_token);
    expect((await mcpCall(next.access_token)).status).toBe(200);
    const reuse = await token({
      grant_type: "refresh_token",
      refresh_token: second.tokens.refresh_token,
      client_id: second.client_id,
    });
    expect(reuse.status).toBe(400);
    expect((await mcpCall(next.access_token)).status).toBe(401);

    expect(
      (await token({ grant_type: "refresh_token", refresh_token: "x", client_id: "oc_unknown" })).status,
    ).toBe(401);
    const third = await login();
    expect(
      (
        await fetch(`${issuer}/oauth/revoke`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "token=unknown",
        })
      ).status,
    ).toBe(200);
    await fetch(`${issuer}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: third.tokens.refresh_token }),
    });
    expect((await mcpCall(third.tokens.access_token)).status).toBe(401);
  });

  it("serves the web tool set, skills and the approval gate to the official SDK client after OAuth", async () => {
    const provider = new ScriptedProvider(async (url) => {
      const answer = await consent(url.toString(), await activation());
      return new URL(answer.headers.get("location") as string).searchParams.get("code") as string;
    }, "memory:read memory:write context:read");
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(`${issuer}/mcp`), { authProvider: provider });
    const client = new Client({ name: "web-assistant", version: "1" });
    const first = transport();
    await expect(client.connect(first)).rejects.toThrow(/Unauthorized/);
    await first.finishAuth(await provider.code);
    await client.connect(transport());
    expect(client.getInstructions()).toMatch(/memory first.*then context.*external web/s);
    // The skills extension as SEP-2640 clients look it up, the earlier experimental key kept beside it.
    expect(client.getServerCapabilities()).toMatchObject({
      extensions: { "io.modelcontextprotocol/skills": {} },
      experimental: { skills: {} },
      tools: { listChanged: false },
    });
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(tools).toContain("context_search");
    expect(tools).toContain("memory_write_page");
    expect(tools).not.toContain("memory_promote_episode");
    expect(tools).not.toContain("memory_episodes");
    // Deletion is offered exactly when the granted scopes include memory:delete.
    const granted = (provider.tokensValue?.scope ?? "").split(" ");
    expect(tools.includes("memory_delete_page")).toBe(granted.includes("memory:delete"));
    const write = await client.callTool({
      name: "memory_write_page",
      arguments: { path: "web/note", body: "from the web" },
    });
    expect((write.structuredContent as { status: string }).status).toBe("PENDING_HUMAN_APPROVAL");
    const skill = await client.readResource({ uri: "skill://ivoai-memory-context/SKILL.md" });
    expect((skill.contents[0] as { text: string }).text).toContain("memory");
    const skills = await client.request(
      { method: "skills/list", params: {} },
      z.object({ skills: z.array(z.object({ name: z.string(), uri: z.string(), digest: z.string() })) }),
    );
    expect(skills.skills[0]).toMatchObject({
      name: "ivoai-memory-context",
      uri: "skill://ivoai-memory-context/SKILL.md",
    });
    expect(skills.skills[0]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // skills/get by name (the earlier shape) and by uri (SEP-2640) answer the same entry, its text included.
    const entry = z.object({ skill: z.object({ uri: z.string(), content: z.string() }).passthrough() });
    const byName = await client.request(
      { method: "skills/get", params: { name: "ivoai-memory-context" } },
      entry,
    );
    const byUri = await client.request(
      { method: "skills/get", params: { uri: "skill://ivoai-memory-context/SKILL.md" } },
      entry,
    );
    expect(byName).toEqual(byUri);
    expect(byName.skill.content).toBe((skill.contents[0] as { text: string }).text);
    await expect(
      client.request({ method: "skills/get", params: { uri: "skill://other/SKILL.md" } }, entry),
    ).rejects.toMatchObject({ code: -32602 });
    // The prompts of the web tool set, with completion of a document's source.
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      "ivoai_knowledge_policy",
      "ivoai_answer_from_knowledge",
      "ivoai_propose_memory_page",
      "ivoai_find_document",
    ]);
    const policy = (await client.getPrompt({ name: "ivoai_knowledge_policy" })).messages[0]?.content;
    expect(policy).toMatchObject({ type: "text", text: expect.stringContaining("`memory_approval_status`") });
    const docs = path.join(root, "handbook-docs");
    await mkdir(docs);
    const added = await runIvoai([
      "server",
      "connector",
      "add",
      "handbook",
      "--type",
      "filesystem",
      "--path",
      docs,
      "--root",
      root,
    ]);
    expect(added.code).toBe(0);
    const sources = await client.complete({
      ref: { type: "ref/prompt", name: "ivoai_find_document" },
      argument: { name: "source", value: "h" },
    });
    expect(sources.completion.values).toEqual(["handbook"]);
    await client.close();
    for (const value of [provider.tokensValue?.access_token, provider.tokensValue?.refresh_token])
      if (value) secrets.push(value);
  });

  it("keeps only hashes of codes and tokens on disk", async () => {
    const bytes = (await readFile(path.join(root, "var/lib/ivoai/oauth/oauth.sqlite"))).toString("latin1");
    const wal = await readFile(path.join(root, "var/lib/ivoai/oauth/oauth.sqlite-wal"))
      .then((b) => b.toString("latin1"))
      .catch(() => "");
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) {
      expect(bytes).not.toContain(secret);
      expect(wal).not.toContain(secret);
    }
  });
});

/** An OAuthClientProvider whose "browser" is a function that completes the consent page. */
class ScriptedProvider implements OAuthClientProvider {
  tokensValue: OAuthTokens | undefined;
  private info: OAuthClientInformationMixed | undefined;
  private verifier = "";
  private resolveCode!: (code: string) => void;
  readonly code = new Promise<string>((resolve) => {
    this.resolveCode = resolve;
  });
  constructor(
    private readonly browser: (url: URL) => Promise<string>,
    private readonly scope: string,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Scripted Web Assistant",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: this.scope,
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.tokensValue;
  }
  saveTokens(tokens: OAuthTokens) {
    this.tokensValue = tokens;
  }
  async redirectToAuthorization(url: URL) {
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toMatch(/\/mcp$/);
    this.resolveCode(await this.browser(url));
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}
