// Two gateway replicas on one PostgreSQL (`[store] backend = "postgres"`): an authorization code is redeemed once
// whichever replica gets it, a refresh token rotated on one and replayed on the other revokes its family, and a
// grant revoked through one replica's tree is refused by the other on the next request.
import { existsSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverPaths } from "../src/config/server-paths.js";
import { initRoot, type RunningServer, runIvoai, startServer, tempDir } from "./helpers.js";
import { answerConsent, pkcePair, TEST_REDIRECT } from "./oauth-flow.js";
import { createThrowawayDatabase, type ThrowawayDatabase, usePostgres } from "./postgres.js";

describe("Web MCP on two replicas sharing PostgreSQL", () => {
  let database: ThrowawayDatabase;
  const roots: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];

  /** A server tree whose stores that support it live in the shared PostgreSQL. */
  const replicaRoot = async () => {
    const { dir, cleanup } = await tempDir("ivoai-replica-");
    cleanups.push(cleanup);
    await initRoot(dir);
    await usePostgres(dir, database.url);
    return dir;
  };

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    for (let i = 0; i < 2; i++) roots.push(await replicaRoot());
    for (const root of roots) servers.push(await startServer(root));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const cleanup of cleanups) await cleanup();
    await database?.drop();
  });

  const url = (replica: 0 | 1) => (servers[replica] as RunningServer).url;
  const activation = async (replica: 0 | 1) => {
    const created = await runIvoai([
      "server",
      "activation",
      "create",
      "--root",
      roots[replica] as string,
      "--json",
    ]);
    expect(created.code, created.stderr).toBe(0);
    return (JSON.parse(created.stdout) as { code: string }).code;
  };
  const token = (replica: 0 | 1, body: Record<string, string>) =>
    fetch(`${url(replica)}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body),
    });
  const mcp = (replica: 0 | 1, accessToken: string) =>
    fetch(`${url(replica)}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${accessToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });

  /** Registers on replica 0 and consents there; the code is exchanged by the caller. */
  const authorize = async () => {
    const registered = await fetch(`${url(0)}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ redirect_uris: [TEST_REDIRECT], client_name: "Replicas" }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const { verifier, challenge } = pkcePair();
    const authorizeUrl = `${url(0)}/oauth/authorize?${new URLSearchParams({
      response_type: "code",
      client_id,
      redirect_uri: TEST_REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      resource: `${url(0)}/mcp`,
    })}`;
    // The activation code is created through the other replica's tree: both read the same store.
    const answer = await answerConsent(url(0), authorizeUrl, await activation(1));
    const code = new URL(answer.headers.get("location") as string).searchParams.get("code") as string;
    return {
      client_id,
      exchange: {
        grant_type: "authorization_code",
        code,
        redirect_uri: TEST_REDIRECT,
        client_id,
        code_verifier: verifier,
      },
    };
  };

  it("redeems a code once when both replicas receive it at the same time", async () => {
    const { exchange } = await authorize();
    const answers = await Promise.all([0, 1, 0, 1, 0, 1].map((replica) => token(replica as 0 | 1, exchange)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
  });

  it("revokes the family when a refresh token rotated on one replica is replayed on the other", async () => {
    const { client_id, exchange } = await authorize();
    const issued = (await (await token(1, exchange)).json()) as {
      access_token: string;
      refresh_token: string;
    };
    expect((await mcp(0, issued.access_token)).status).toBe(200);
    const refresh = { grant_type: "refresh_token", client_id, refresh_token: issued.refresh_token };
    const rotated = await token(0, refresh);
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()) as { access_token: string; refresh_token: string };
    expect((await token(1, refresh)).status).toBe(400);
    expect((await mcp(0, next.access_token)).status).toBe(401);
    expect((await token(0, { ...refresh, refresh_token: next.refresh_token })).status).toBe(400);
  });

  it("refuses a grant revoked through one replica's tree on the other's next request", async () => {
    const { client_id, exchange } = await authorize();
    const issued = (await (await token(0, exchange)).json()) as { access_token: string };
    expect((await mcp(0, issued.access_token)).status).toBe(200);
    const listed = await runIvoai(["server", "clients", "list", "--root", roots[1] as string, "--json"]);
    const clients = (JSON.parse(listed.stdout) as { clients: { id: string; grants?: { id: string }[] }[] })
      .clients;
    const grant = clients.find((client) => client.id === client_id)?.grants?.[0]?.id as string;
    expect(grant).toMatch(/^fam_/);
    const revoked = await runIvoai(["server", "clients", "revoke", grant, "--root", roots[1] as string]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await mcp(0, issued.access_token)).status).toBe(401);
    // Nothing of OAuth went to the trees' SQLite files.
    for (const root of roots) expect(existsSync(serverPaths(root).oauthDb)).toBe(false);
  });

  it("refuses to start a replica on a database that a newer ivoai migrated, saying so", async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(
        "INSERT INTO ivoai_oauth.schema_migrations (store, version, name, applied_at) VALUES ('oauth', 99, 'future', $1)",
        [new Date().toISOString()],
      );
    } finally {
      await client.end();
    }
    const error = await startServer(await replicaRoot()).catch((caught: unknown) => caught);
    expect(String(error)).toMatch(/oauth store is at schema version 99.*upgrade ivoai/);
    expect(String(error)).not.toContain(database.url);
  });
});
