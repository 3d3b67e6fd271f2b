// Memory through the built server: the approval gate seen by a real MCP client, racing approvers,
// episodic isolation over the hooks endpoint, the audit log, and degraded readiness.
import { spawn } from "node:child_process";
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BIN,
  callTool,
  connectMcp,
  decideApproval,
  enrolledCredential,
  initRoot,
  proposeAndApprove,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = {
  status: string;
  data: Record<string, unknown>;
  telemetry: Record<string, number | boolean>;
};

const credential = (server: RunningServer, root: string, scopes?: string): Promise<string> =>
  enrolledCredential(server.url, root, scopes);

const memoryClient = (url: string, token: string, session: string): Promise<Client> =>
  connectMcp(`${url}/v1/memory/mcp`, token, {
    "x-ivoai-session-id": session,
    "x-ivoai-project": "git:acme/api",
  });

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  callTool<Envelope>(client, name, args);

describe("memory end to end", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let agent: Client;
  let approver: string;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    agent = await memoryClient(server.url, await credential(server, root), "sess-a");
    approver = await credential(server, root, "approvals:read,approvals:decide");
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    await cleanup();
  });

  const decide = (id: string, verb: "approve" | "reject") => decideApproval(server.url, approver, id, verb);

  it("keeps an agent's write pending and invisible, then visible once after approval", async () => {
    const pending = await call(agent, "memory_write_page", {
      path: "decisions/queue",
      body: "# Queue choice\n\nWe use the axolotl queue for billing events.",
      tags: ["adr"],
    });
    expect(pending.status).toBe("PENDING_HUMAN_APPROVAL");
    const id = pending.data.approval_id as string;
    expect(pending.data.diff).toContain("+ We use the axolotl queue for billing events.");
    expect((await call(agent, "memory_query", { query: "axolotl queue" })).data.count).toBe(0);
    expect((await call(agent, "memory_approval_status", { approval_id: id })).data.status).toBe("pending");

    const list = await fetch(`${server.url}/v1/approvals?status=pending`, {
      headers: { authorization: `Bearer ${approver}` },
    });
    expect(((await list.json()) as { approvals: { id: string }[] }).approvals.map((a) => a.id)).toContain(id);
    expect((await decide(id, "approve")).status).toBe(200);
    expect((await decide(id, "approve")).status).toBe(409);

    const found = await call(agent, "memory_query", { query: "axolotl queue" });
    expect(
      (found.data.results as { path: string; version: number }[]).map((r) => [r.path, r.version]),
    ).toEqual([["decisions/queue", 1]]);
    expect((await call(agent, "memory_approval_status", { approval_id: id })).data.status).toBe("applied");
    // Another credential cannot read this request's status.
    const other = await memoryClient(server.url, await credential(server, root), "sess-z");
    const foreign = await other.callTool({ name: "memory_approval_status", arguments: { approval_id: id } });
    expect(foreign.isError).toBe(true);
    await other.close();
  });

  it("never lets an agent credential decide, and hides delete from credentials without memory:delete", async () => {
    const pending = await call(agent, "memory_write_page", { path: "x/y", body: "text" });
    const agentToken = await credential(server, root);
    const response = await fetch(`${server.url}/v1/approvals/${pending.data.approval_id}/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${agentToken}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(403);
    const tools = (await agent.listTools()).tools.map((tool) => tool.name);
    expect(tools).not.toContain("memory_delete_page");
    expect(tools).toContain("memory_write_page");
  });

  it("applies a request exactly once when many approvers race across processes", async () => {
    const pending = await call(agent, "memory_write_page", { path: "race/page", body: "# Race\n\nbody" });
    const id = pending.data.approval_id as string;
    const cli = () =>
      new Promise<number>((resolve) => {
        const child = spawn(process.execPath, [BIN, "server", "approvals", "approve", id, "--root", root], {
          stdio: "ignore",
        });
        child.on("exit", (code) => resolve(code ?? -1));
      });
    const [codes, http] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, cli)),
      decide(id, "approve"),
    ]);
    const applied = codes.filter((code) => code === 0).length + (http.status === 200 ? 1 : 0);
    expect(applied).toBe(1);
    const page = await call(agent, "memory_read_page", { path: "race/page" });
    expect((page.data.page as { version: number }).version).toBe(1);
  });

  it("isolates episodic memory per session and answers as_of", async () => {
    const token = await credential(server, root);
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/memory`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // A moment before anything below was recorded.
    const before = new Date(Date.now() - 1000).toISOString();
    const a = await post({
      session_id: "sess-a",
      project: "git:acme/api",
      event: "prompt_submitted",
      data: { chars: 42 },
    });
    expect(a.status).toBe(202);
    expect(
      (
        await post({
          session_id: "sess-b",
          project: "git:acme/api",
          event: "tool_used",
          data: { tool: "grep" },
        })
      ).status,
    ).toBe(202);
    expect(
      (await post({ session_id: "sess-a", project: "git:acme/api", event: "coffee_break" })).status,
    ).toBe(400);
    expect(
      (
        await post({
          session_id: "sess-a",
          project: "p",
          event: "tool_used",
          data: { blob: "x".repeat(70_000) },
        })
      ).status,
    ).toBe(413);

    const get = async (query: string) =>
      (
        (await (
          await fetch(`${server.url}/v1/memory/events?${query}`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as {
          events: { session_id: string; kind: string }[];
        }
      ).events;
    expect((await get("session_id=sess-a")).map((event) => event.session_id)).toEqual(["sess-a"]);
    expect((await get("session_id=sess-b")).map((event) => event.kind)).toEqual(["tool_used"]);
    expect(await get(`session_id=sess-a&as_of=${encodeURIComponent(before)}`)).toEqual([]);
    expect((await get("scope=project&project=git:acme/api")).length).toBe(2);

    const episodes = await call(agent, "memory_episodes", {});
    expect(
      (episodes.data.events as { session_id: string }[]).every((event) => event.session_id === "sess-a"),
    ).toBe(true);
  });

  it("records every tool call with its telemetry in the audit log", async () => {
    const result = await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "tool_call"]);
    expect(result.code).toBe(0);
    const { events } = JSON.parse(result.stdout) as {
      events: {
        tool: string;
        status: string;
        tier: string;
        session_id: string;
        guardrail_checked: boolean;
        latency_ms: number;
      }[];
    };
    const write = events.find((event) => event.tool === "memory_write_page");
    expect(write).toMatchObject({
      status: "PENDING_HUMAN_APPROVAL",
      tier: "write",
      session_id: "sess-a",
      guardrail_checked: true,
    });
    expect(events.some((event) => event.tool === "memory_query" && event.status === "SUCCESS")).toBe(true);
    const decisions = JSON.parse(
      (await runIvoai(["server", "audit", "--root", root, "--json", "--kind", "approval_decision"])).stdout,
    ).events;
    expect(decisions.length).toBeGreaterThanOrEqual(2);
  });
});

describe("memory unavailable", () => {
  it("reports ready_degraded naming memory while context keeps working", async () => {
    const { dir: root, cleanup } = await tempDir();
    try {
      await initRoot(root);
      // A directory where the database file should be: the store cannot open.
      await mkdir(path.join(root, "var/lib/ivoai/memory/memory.sqlite"));
      const server = await startServer(root);
      try {
        const ready = await fetch(`${server.url}/ready`);
        expect(ready.status).toBe(200);
        expect(await ready.json()).toEqual({ status: "ready_degraded", degraded: ["memory"], failed: [] });
        const token = await credential(server, root);
        const auth = {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        };
        const memory = await fetch(`${server.url}/v1/memory/mcp`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        expect(memory.status).toBe(503);
        const context = await fetch(`${server.url}/v1/mcp/context`, {
          method: "POST",
          headers: auth,
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "context_health", arguments: {} },
          }),
        });
        expect(context.status).toBe(200);
      } finally {
        await server.stop();
      }
    } finally {
      await cleanup();
    }
  });
});

describe("memory index snapshot", () => {
  it("is saved by the gateway and loaded by the next start, which catches up with pages written since", async () => {
    const { dir: root, cleanup } = await tempDir();
    let server: RunningServer | undefined;
    try {
      await initRoot(root);
      server = await startServer(root);
      const snapshot = path.join(root, "var/lib/ivoai/memory/page-index.snapshot");
      // Written in the background after the first (full) load.
      const first = await vi.waitFor(() => stat(snapshot), { timeout: 10_000, interval: 50 });
      const approver = await credential(server, root, "approvals:read,approvals:decide");
      let agent = await memoryClient(server.url, await credential(server, root), "sess-snap");
      expect(
        await proposeAndApprove(server.url, agent, approver, {
          path: "ops/pangolin",
          body: "# Pangolin\n\nThe pangolin deploy keys live in the ops vault.",
        }),
      ).toEqual({ proposed: "PENDING_HUMAN_APPROVAL", decided: 200 });
      await agent.close();
      await server.stop();

      server = await startServer(root);
      // Loaded in the background (a one-page memory within the start's grace, but a busy host may take longer).
      const restarted = server;
      await vi.waitFor(() => expect(restarted.output()).toContain("memory index ready"), {
        timeout: 30_000,
        interval: 50,
      });
      expect(server.output()).not.toContain("snapshot not used");
      const ready = await fetch(`${server.url}/ready`);
      expect(await ready.json()).toEqual({ status: "ready", degraded: [], failed: [] });
      agent = await memoryClient(server.url, await credential(server, root), "sess-snap-2");
      const found = await call(agent, "memory_query", { query: "pangolin keys" });
      expect((found.data.results as { path: string }[]).map((hit) => hit.path)).toEqual(["ops/pangolin"]);
      await agent.close();
      // Restored and caught up by one page: not rebuilt, so not written again.
      expect((await stat(snapshot)).mtimeMs).toBe(first.mtimeMs);
    } finally {
      await server?.stop();
      await cleanup();
    }
  });
});
