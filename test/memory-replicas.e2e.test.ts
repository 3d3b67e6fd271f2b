// Two gateway replicas on one PostgreSQL memory store (and the operator's CLI beside them): an approval decided
// at the same moment on both replicas and the CLI is applied exactly once, and each replica's search finds what
// the other applied (its index catches up by the shared generation counter).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callTool,
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "./postgres.js";

const memoryClient = (url: string, token: string): Promise<Client> =>
  connectMcp(`${url}/v1/memory/mcp`, token, {
    "x-ivoai-session-id": "sess-r",
    "x-ivoai-project": "git:acme/api",
  });

describe("memory on PostgreSQL with two replicas", async () => {
  let database: ThrowawayDatabase | undefined;
  const roots: string[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  const servers: RunningServer[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    for (let replica = 0; replica < 2; replica++) {
      const { dir, cleanup } = await tempDir();
      cleanups.push(cleanup);
      roots.push(dir);
      await initRoot(dir);
      const set = await runIvoai(["server", "store", "set", "postgres", "--url-stdin", "--root", dir], {
        input: `${database.url}\n`,
      });
      expect(set.code, set.stderr).toBe(0);
    }
    for (const root of roots) servers.push(await startServer(root));
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    for (const server of servers) await server.stop().catch(() => {});
    for (const cleanup of cleanups) await cleanup();
    await database?.drop();
  });

  it("applies once whichever replica or the CLI decides, and both replicas find the page", async () => {
    const [a, b] = servers as [RunningServer, RunningServer];
    const [rootA, rootB] = roots as [string, string];
    const agentA = await memoryClient(a.url, await enrolledCredential(a.url, rootA));
    const agentB = await memoryClient(b.url, await enrolledCredential(b.url, rootB));
    clients.push(agentA, agentB);
    // Both indexes are loaded (and empty) before anything is written.
    expect((await callTool(agentA, "memory_query", { query: "axolotl replica" })).data.count).toBe(0);
    expect((await callTool(agentB, "memory_query", { query: "axolotl replica" })).data.count).toBe(0);

    const proposed = await callTool(agentA, "memory_write_page", {
      path: "decisions/replicas",
      body: "# Replicas\n\nThe axolotl replica pattern keeps one queue per region.",
    });
    const id = proposed.data.approval_id as string;
    expect(id).toMatch(/^apr_/);
    const approverA = await enrolledCredential(a.url, rootA, "approvals:read,approvals:decide");
    const approverB = await enrolledCredential(b.url, rootB, "approvals:read,approvals:decide");
    const approve = (url: string, token: string) =>
      fetch(`${url}/v1/approvals/${id}/approve`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as { outcome: string },
      }));
    const [onA, onB, cli] = await Promise.all([
      approve(a.url, approverA),
      approve(b.url, approverB),
      runIvoai(["server", "approvals", "approve", id, "--root", rootB, "--json"]),
    ]);
    const outcomes = [onA.body.outcome, onB.body.outcome, JSON.parse(cli.stdout).outcome as string];
    expect(outcomes.filter((outcome) => outcome === "applied")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "already_decided")).toHaveLength(2);
    for (const http of [onA, onB]) expect(http.status).toBe(http.body.outcome === "applied" ? 200 : 409);
    expect(cli.code).toBe(outcomes[2] === "applied" ? 0 : 1);

    for (const agent of [agentA, agentB]) {
      const found = await callTool(agent, "memory_query", { query: "axolotl replica" });
      expect(
        (found.data.results as { path: string; version: number }[]).map((r) => [r.path, r.version]),
      ).toEqual([["decisions/replicas", 1]]);
    }
    const listed = JSON.parse(
      (await runIvoai(["server", "approvals", "list", "--status", "applied", "--root", rootA, "--json"]))
        .stdout,
    );
    expect(listed.approvals.map((row: { id: string }) => row.id)).toEqual([id]);
  });
});
