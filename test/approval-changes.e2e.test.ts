// What an approver is shown, end to end against the built server: an agent replaces a page with the same body
// and an expiry two minutes ahead, and both the HTTP API and `ivoai server approvals show` (text and --json)
// lead with the page's deletion date. Tag, relation and title changes are named; the list filters by requester
// name, tool, text and age; a bulk decision applies each request exactly once.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApprovalDetail, ApprovalPage, BulkDecisionResponse } from "../src/protocol/approvals.js";
import {
  connectMcp,
  createCode,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = { status: string; data: { approval_id: string } };

describe("approval change descriptions", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let agent: Client;
  let agentId: string;
  let approver: string;

  const api = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const propose = async (args: Record<string, unknown>, tool = "memory_write_page") => {
    const answer = await agent.callTool({ name: tool, arguments: args });
    const result = answer.structuredContent as Envelope | undefined;
    expect(result?.status, JSON.stringify(answer)).toBe("PENDING_HUMAN_APPROVAL");
    return (result as Envelope).data.approval_id;
  };
  const approve = (id: string) => api(`/v1/approvals/${id}/approve`, { method: "POST", body: "{}" });
  const pageVersion = async (path: string) => {
    const read = (await agent.callTool({ name: "memory_read_page", arguments: { path } }))
      .structuredContent as {
      data: { page: { version: number } };
    };
    return read.data.page.version;
  };

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    const { code } = await createCode(root, ["--scopes", "memory:read,memory:write,memory:delete"]);
    const enrolled = (await (
      await fetch(`${server.url}/v1/enroll`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, client_name: "build-bot" }),
      })
    ).json()) as { credential: string; client_id: string };
    agentId = enrolled.client_id;
    agent = await connectMcp(`${server.url}/v1/memory/mcp`, enrolled.credential, {
      "x-ivoai-session-id": "sess-changes",
      "x-ivoai-project": "git:acme/api",
    });
    approver = await enrolledCredential(server.url, root, "approvals:read,approvals:decide,memory:read");
    await approve(
      await propose({
        path: "decisions/queue",
        title: "Queue",
        tags: ["infra", "queues"],
        relations: { depends_on: ["decisions/broker"] },
        body: "# Queue\n\nWe use the axolotl queue.",
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    await cleanup();
  });

  it("leads with the deletion date of a same-body replace that sets an expiry, in the API and the CLI", async () => {
    const expires = new Date(Date.now() + 120_000).toISOString();
    const id = await propose({
      path: "decisions/queue",
      title: "Queue",
      tags: ["infra", "queues"],
      relations: { depends_on: ["decisions/broker"] },
      body: "# Queue\n\nWe use the axolotl queue.",
      expires_at: expires,
    });
    const detail = await api<ApprovalDetail>(`/v1/approvals/${id}`);
    expect(detail.requester_name).toBe("build-bot");
    expect(detail.changes.metadata_only).toBe(true);
    expect(detail.changes.items[0]).toMatchObject({
      field: "expires_at",
      change: "set",
      severity: "danger",
      after: expires,
    });
    const day = `${expires.slice(0, 16).replace("T", " ")} UTC`;
    expect(detail.changes.headline).toContain(`This page will be deleted on ${day}`);
    expect(detail.changes.headline).toContain("metadata only");

    const show = await runIvoai(["server", "approvals", "show", id, "--root", root]);
    expect(show.code, show.stderr).toBe(0);
    const lines = show.stdout.split("\n");
    // "in 2 minutes" on an idle host; a busy one may take long enough to round it to 1.
    const loud = `  !! Sets an expiry: this page will be deleted on ${day} (in `;
    expect(
      lines.filter((line) => line.startsWith(loud)),
      show.stdout,
    ).toHaveLength(1);
    expect(show.stdout).toMatch(/approving: Replaces .*decisions\/queue \(version 1\) — metadata only/);
    expect(show.stdout).toContain("requester: build-bot (");
    // The loudest line comes before the rest of the description.
    expect(lines.findIndex((line) => line.startsWith("  !!"))).toBeLessThan(
      lines.findIndex((line) => line.includes("The body is unchanged.")),
    );
    const json = await runIvoai(["server", "approvals", "show", id, "--root", root, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const shown = JSON.parse(json.stdout) as ApprovalDetail;
    expect(shown.changes.items).toEqual(
      detail.changes.items.map((item) =>
        item.field === "expires_at" ? { ...item, text: expect.stringContaining(day) } : item,
      ),
    );
    await api(`/v1/approvals/${id}/reject`, { method: "POST", body: '{"reason":"keep it"}' });
  });

  it("names title, tag and relation changes, and the body lines", async () => {
    const id = await propose({
      path: "decisions/queue",
      title: "Queue choice",
      tags: ["infra", "billing"],
      relations: { depends_on: ["decisions/kafka"] },
      body: "# Queue\n\nWe use the kafka queue.",
    });
    const { changes } = await api<ApprovalDetail>(`/v1/approvals/${id}`);
    const texts = changes.items.map((item) => item.text);
    expect(texts).toContain('Changes the title from "Queue" to "Queue choice".');
    expect(texts).toContain('Adds tags "billing"; removes tags "queues".');
    expect(texts).toContain(
      'Adds relations depends_on → "decisions/kafka"; removes relations depends_on → "decisions/broker".',
    );
    expect(changes.body.lines.filter((line) => line.op !== "=")).toEqual([
      { op: "-", old: 3, new: null, text: "We use the axolotl queue." },
      { op: "+", old: null, new: 3, text: "We use the kafka queue." },
    ]);
    const show = await runIvoai(["server", "approvals", "show", id, "--root", root]);
    expect(show.stdout).toContain('  • Changes the title from "Queue" to "Queue choice".');
    expect(show.stdout).toContain("  │ 3   - We use the axolotl queue.");
    expect(show.stdout).toContain("  │   3 + We use the kafka queue.");
    await api(`/v1/approvals/${id}/reject`, { method: "POST", body: "{}" });
  });

  it("filters the list by requester name, tool, text and age", async () => {
    const deletion = await propose(
      { path: "decisions/queue", confirm: true, project: "git:acme/api" },
      "memory_delete_page",
    );
    const list = (query: string) => api<ApprovalPage>(`/v1/approvals?status=pending&${query}`);
    expect((await list("requester=build-bot")).approvals.map((row) => row.id)).toContain(deletion);
    expect((await list(`requester=${agentId}`)).approvals[0]?.requester_name).toBe("build-bot");
    expect((await list("requester=someone-else")).approvals).toEqual([]);
    expect((await list("tool=memory_delete_page")).approvals.map((row) => row.id)).toEqual([deletion]);
    expect((await list("tool=memory_feedback")).approvals).toEqual([]);
    expect((await list("q=DECISIONS%2Fqueue")).approvals.map((row) => row.id)).toEqual([deletion]);
    expect((await list("q=nowhere")).approvals).toEqual([]);
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    expect((await list(`before=${hourAgo}`)).approvals).toEqual([]);
    const cli = await runIvoai([
      ...["server", "approvals", "list", "--root", root, "--json"],
      ...["--requester", "build-bot", "--tool", "memory_delete_page"],
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    expect((JSON.parse(cli.stdout) as ApprovalPage).approvals.map((row) => row.id)).toEqual([deletion]);
    const bad = await runIvoai(["server", "approvals", "list", "--root", root, "--older-than", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--older-than");
    // A name two credentials carry never gathers both: the filter asks for an id.
    for (let twin = 0; twin < 2; twin++) {
      const { code } = await createCode(root);
      await fetch(`${server.url}/v1/enroll`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, client_name: "twin" }),
      });
    }
    const ambiguous = await fetch(`${server.url}/v1/approvals?requester=twin`, {
      headers: { authorization: `Bearer ${approver}` },
    });
    expect(ambiguous.status).toBe(400);
    expect(((await ambiguous.json()) as { message: string }).message).toContain("carried by 2 credentials");
    const table = await runIvoai([
      "server",
      "approvals",
      "list",
      "--root",
      root,
      "--tool",
      "memory_delete_page",
    ]);
    expect(table.stdout).toContain(`build-bot (${agentId})`);
    const detail = await api<ApprovalDetail>(`/v1/approvals/${deletion}`);
    expect(detail.changes.items[0]).toMatchObject({ field: "delete", severity: "danger" });
    await api(`/v1/approvals/${deletion}/reject`, { method: "POST", body: "{}" });
  });

  it("applies each request of a bulk approval exactly once, ids repeated or not", async () => {
    const before = await pageVersion("decisions/queue");
    const ids = [
      await propose({ path: "bulk/one", body: "one" }),
      await propose({ path: "bulk/two", body: "two" }),
      await propose({ path: "decisions/queue", kind: "helpful" }, "memory_feedback"),
    ];
    const { results } = await api<BulkDecisionResponse>("/v1/approvals/decide", {
      method: "POST",
      body: JSON.stringify({ ids: [...ids, ids[0], "apr_missing"], approve: true, reason: "bulk" }),
    });
    expect(results).toEqual([
      { id: ids[0], outcome: "applied" },
      { id: ids[1], outcome: "applied" },
      { id: ids[2], outcome: "applied" },
      { id: "apr_missing", outcome: "not_found", message: expect.stringContaining("apr_missing") },
    ]);
    expect(await pageVersion("bulk/one")).toBe(1);
    expect(await pageVersion("decisions/queue")).toBe(before);
    const again = await api<BulkDecisionResponse>("/v1/approvals/decide", {
      method: "POST",
      body: JSON.stringify({ ids, approve: false }),
    });
    expect(again.results.map((r) => r.outcome)).toEqual([
      "already_decided",
      "already_decided",
      "already_decided",
    ]);

    // The CLI decides several ids the same way; its exit status says whether all were decided as asked.
    const more = [
      await propose({ path: "bulk/three", body: "3" }),
      await propose({ path: "bulk/four", body: "4" }),
    ];
    const cli = await runIvoai(["server", "approvals", "reject", ...more, "--root", root, "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    expect((JSON.parse(cli.stdout) as BulkDecisionResponse).results.map((r) => r.outcome)).toEqual([
      "rejected",
      "rejected",
    ]);
    const twice = await runIvoai(["server", "approvals", "approve", ...more, "--root", root]);
    expect(twice.code).toBe(1);
    expect(twice.stdout).toContain(`approval ${more[0]}: already_decided`);
  });

  it("refuses a bulk decision over the limit or without ids, and a requester approving its own requests", async () => {
    const tooMany = await fetch(`${server.url}/v1/approvals/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: Array.from({ length: 201 }, (_, i) => `apr_${i}`), approve: true }),
    });
    expect(tooMany.status).toBe(400);
    const empty = await fetch(`${server.url}/v1/approvals/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${approver}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: [], approve: true }),
    });
    expect(empty.status).toBe(400);
    const noScope = await fetch(`${server.url}/v1/approvals/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${await enrolledCredential(server.url, root)}` },
      body: JSON.stringify({ ids: ["apr_x"], approve: true }),
    });
    expect(noScope.status).toBe(403);

    const both = await enrolledCredential(
      server.url,
      root,
      "memory:read,memory:write,approvals:read,approvals:decide",
    );
    const self = await connectMcp(`${server.url}/v1/memory/mcp`, both);
    const own = (
      (await self.callTool({ name: "memory_write_page", arguments: { path: "self/own", body: "mine" } }))
        .structuredContent as Envelope
    ).data.approval_id;
    await self.close();
    const answer = await fetch(`${server.url}/v1/approvals/decide`, {
      method: "POST",
      headers: { authorization: `Bearer ${both}`, "content-type": "application/json" },
      body: JSON.stringify({ ids: [own], approve: true }),
    });
    expect(((await answer.json()) as BulkDecisionResponse).results).toEqual([
      { id: own, outcome: "forbidden", message: expect.stringContaining("own request") },
    ]);
    expect((await api<ApprovalDetail>(`/v1/approvals/${own}`)).status).toBe("pending");
  });
});
