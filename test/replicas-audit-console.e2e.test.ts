import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSession, CSRF_HEADER } from "../src/protocol/console-api.js";
import { consoleLogin, signIn, tokenOf } from "./console-helpers.js";
import {
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { createThrowawayDatabase, type ThrowawayDatabase, usePostgres } from "./postgres.js";

describe("replicas on one PostgreSQL: audit log and console sessions", () => {
  let database: ThrowawayDatabase;
  const roots: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const replicas: RunningServer[] = [];

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    for (let index = 0; index < 2; index++) {
      const { dir, cleanup } = await tempDir(`ivoai-replica-${index}-`);
      cleanups.push(cleanup);
      roots.push(dir);
      await initRoot(dir);
      await usePostgres(dir, database.url);
    }
    for (const root of roots) replicas.push(await startServer(root));
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    for (const cleanup of cleanups) await cleanup();
    await database?.drop();
  });

  it("accepts a session opened on one replica on the other, and ends it everywhere on sign-out", async () => {
    const [a, b] = replicas as [RunningServer, RunningServer];
    const { code } = await consoleLogin(roots[0] as string, "--role", "approver", "--name", "Ana");
    // The code was created by the CLI of the first tree; the second replica spends it.
    const opened = await signIn(b.url, JSON.stringify({ code }));
    expect(opened.status).toBe(200);
    const token = tokenOf(opened);
    const { csrf_token: csrf } = (await opened.json()) as ConsoleSession;
    const session = (url: string) =>
      fetch(`${url}/v1/console/session`, { headers: { cookie: `ivoai_console=${token}` } });
    const onA = await session(a.url);
    expect(onA.status).toBe(200);
    expect(await onA.json()).toMatchObject({ name: "Ana", role: "approver", csrf_token: csrf });
    // Both trees list it.
    for (const root of roots) {
      const listed = await runIvoai(["server", "console", "sessions", "--root", root, "--json"]);
      expect(
        (JSON.parse(listed.stdout) as { sessions: { name: string }[] }).sessions.map((s) => s.name),
      ).toEqual(["Ana"]);
    }
    // Signed out on the first replica: refused by the second.
    const signOut = await fetch(`${a.url}/v1/console/session`, {
      method: "DELETE",
      headers: { cookie: `ivoai_console=${token}`, [CSRF_HEADER]: csrf },
    });
    expect(signOut.status).toBe(204);
    expect((await session(b.url)).status).toBe(401);
  });

  it("keeps both replicas' tool calls in one audit log, listed identically from either replica or tree", async () => {
    const credentials: string[] = [];
    for (const [index, replica] of replicas.entries()) {
      const credential = await enrolledCredential(
        replica.url,
        roots[index] as string,
        "context:read,audit:read",
      );
      credentials.push(credential);
      for (let call = 0; call < 3; call++) {
        const response = await fetch(`${replica.url}/v1/context/search?q=replica${index}call${call}`, {
          headers: { authorization: `Bearer ${credential}` },
        });
        expect(response.status).toBe(200);
      }
    }
    // Each replica writes what it holds before it answers a listing: after one listing on each, all is written.
    const events = async (index: number) => {
      const response = await fetch(`${replicas[index]?.url}/v1/audit/events?kind=tool_call`, {
        headers: { authorization: `Bearer ${credentials[index]}` },
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { events: { id: number; credential_id: string }[] }).events;
    };
    await events(0);
    await events(1);
    const listings = [await events(0), await events(1)];
    for (const root of roots) {
      const result = await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "tool_call"]);
      expect(result.code).toBe(0);
      listings.push(
        (JSON.parse(result.stdout) as { events: { id: number; credential_id: string }[] }).events,
      );
    }
    expect(listings[0]).toHaveLength(6);
    for (const listing of listings.slice(1)) expect(listing).toEqual(listings[0]);
    // Two credentials (one per tree's enrollment), three calls each.
    const byCredential = new Map<string, number>();
    for (const event of listings[0] ?? [])
      byCredential.set(event.credential_id, (byCredential.get(event.credential_id) ?? 0) + 1);
    expect([...byCredential.values()]).toEqual([3, 3]);
  });

  it("keeps an acknowledged revocation's audit record when its replica is killed (SIGKILL) right after", async () => {
    const replica = replicas[1] as RunningServer;
    const root = roots[1] as string;
    const admin = await enrolledCredential(replica.url, root, "status:read,clients:revoke");
    const victims: string[] = [];
    for (let index = 0; index < 5; index++) {
      const victim = await enrolledCredential(replica.url, root);
      const status = await fetch(`${replica.url}/v1/admin/status`, {
        headers: { authorization: `Bearer ${victim}` },
      });
      victims.push(((await status.json()) as { caller: { id: string } }).caller.id);
    }
    const statuses = await Promise.all(
      victims.map(
        async (id) =>
          (
            await fetch(`${replica.url}/v1/admin/clients/${id}/revoke`, {
              method: "POST",
              headers: { authorization: `Bearer ${admin}` },
            })
          ).status,
      ),
    );
    expect(statuses).toEqual(victims.map(() => 200));
    expect((await replica.stop("SIGKILL")).signal).toBe("SIGKILL");
    const result = await runIvoai([
      "server",
      "audit",
      "--root",
      roots[0] as string,
      "--json",
      "--kind",
      "client_revoked",
    ]);
    const events = (JSON.parse(result.stdout) as { events: { detail: { id: string } }[] }).events;
    expect(events.map((event) => event.detail.id).sort()).toEqual([...victims].sort());
  });
});
