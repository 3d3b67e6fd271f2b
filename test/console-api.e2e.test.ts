// The web console's HTTP API against the built server: real MCP calls counted in the activity view, approval
// counts, memory pages and their graph, context search, ingest summaries, and revoking clients and grants.
import { symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  Activity,
  ApprovalCounts,
  ConnectorView,
  EnrolledClient,
  Overview,
  PageDetail,
  PageGraph,
  PageList,
  SearchResults,
  SessionTimeline,
  WebClient,
} from "../src/protocol/console-api.js";
import { consoleSession } from "./console-helpers.js";
import {
  addDocsConnector,
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { obtainTokens } from "./oauth-flow.js";

const ADMIN_SCOPES =
  "status:read,connector:read,context:read,memory:read,approvals:read,approvals:decide,audit:read,clients:read,clients:revoke";
const SESSION = "sess-console-1";
const PROJECT = "git:acme/api";

type Envelope = { status: string; data: Record<string, unknown> };

describe("console API end to end", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let cleanupDocs: (() => Promise<void>) | undefined;
  let server: RunningServer;
  let admin: string;
  let viewer: string;
  let agent: string;
  let agentId: string;
  let contextMcp: Client;
  let memoryMcp: Client;
  const started = new Date(Date.now() - 1000);

  const get = async <T>(route: string, token = admin): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: response.status, body: (await response.json()) as T };
  };
  const post = async <T>(route: string, token = admin, body: unknown = {}) => {
    const response = await fetch(`${server.url}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  };
  const tool = async (client: Client, name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })).structuredContent as Envelope;
  const activityNow = () =>
    get<Activity>(
      `/v1/audit/activity?${new URLSearchParams({
        since: started.toISOString(),
        until: new Date(Date.now() + 60_000).toISOString(),
        bucket: "minute",
      })}`,
    );

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    const docsDir = await tempDir("ivoai-console-docs-");
    cleanupDocs = docsDir.cleanup;
    const docs = docsDir.dir;
    await writeFile(
      path.join(docs, "billing.md"),
      "# Billing runbook\n\nRotate the zebrafish ledger keys monthly.\n",
    );
    await writeFile(path.join(docs, "deploy.md"), "# Deploy\n\nShip with the blue-green switch.\n");
    // A symbolic link is always skipped, with a reason.
    await symlink(path.join(docs, "deploy.md"), path.join(docs, "link.md"));
    await initRoot(root);
    await addDocsConnector(root, docs);
    server = await startServer(root);
    admin = await enrolledCredential(server.url, root, ADMIN_SCOPES);
    viewer = await enrolledCredential(server.url, root, "status:read,audit:read,clients:read");
    agent = await enrolledCredential(server.url, root);
    agentId = (await get<{ caller: { id: string } }>("/v1/admin/status", agent)).body.caller.id;
    const headers = { "x-ivoai-session-id": SESSION, "x-ivoai-project": PROJECT };
    contextMcp = await connectMcp(`${server.url}/v1/mcp/context`, agent, headers);
    memoryMcp = await connectMcp(`${server.url}/v1/memory/mcp`, agent, headers);
  });
  afterAll(async () => {
    await contextMcp?.close();
    await memoryMcp?.close();
    await server?.stop();
    await cleanup();
    await cleanupDocs?.();
  });

  it("keeps each connector's last ingest summary, written by `server ingest` while the server runs", async () => {
    const before = await get<{ connectors: ConnectorView[] }>("/v1/admin/connectors");
    expect(before.body.connectors.map((c) => [c.name, c.last_ingest])).toEqual([["docs", null]]);
    const ingest = await runIvoai(["server", "ingest", "--root", root]);
    expect(ingest.code, ingest.stderr).toBe(0);

    const after = await get<{ connectors: ConnectorView[] }>("/v1/admin/connectors");
    const [docs] = after.body.connectors;
    expect(docs?.documents).toBe(2);
    expect(docs?.last_ingest).toMatchObject({
      added: 2,
      updated: 0,
      unchanged: 0,
      removed: 0,
      complete: true,
    });
    expect(docs?.last_ingest?.skipped).toBe(1);
    expect(docs?.last_ingest?.skipped_examples.map((example) => example.path)).toEqual(["link.md"]);
    expect(Object.values(docs?.last_ingest?.skipped_by_reason ?? {})).toEqual([1]);
    expect(Date.parse(docs?.last_ingest?.at ?? "")).toBeGreaterThanOrEqual(started.getTime());

    // A second run: nothing changed.
    expect((await runIvoai(["server", "ingest", "--root", root])).code).toBe(0);
    const again = (await get<{ connectors: ConnectorView[] }>("/v1/admin/connectors")).body.connectors[0];
    expect(again?.last_ingest).toMatchObject({ added: 0, unchanged: 2 });
  });

  it("counts real MCP calls in the activity view, exactly", async () => {
    expect((await tool(contextMcp, "context_search", { query: "zebrafish ledger" })).status).toBe("SUCCESS");
    expect((await tool(contextMcp, "context_search", { query: "blue-green" })).status).toBe("SUCCESS");
    const writes: string[] = [];
    for (const [pagePath, body] of [
      [
        "decisions/queue",
        "# Queue choice\n\nWe use the axolotl queue; see [[decisions/other]] and [[runbooks/missing]].\n",
      ],
      ["decisions/other", "# Other decision\n\nNothing links here but the queue.\n"],
      ["scratch/pending", "# Still waiting\n"],
      ["scratch/rejected", "# Rejected\n"],
    ] as const) {
      const pending = await tool(memoryMcp, "memory_write_page", { path: pagePath, body });
      expect(pending.status).toBe("PENDING_HUMAN_APPROVAL");
      writes.push(pending.data.approval_id as string);
    }
    // A tool this endpoint does not offer: refused before it runs, audited as REJECTED.
    const unknown = await memoryMcp.callTool({ name: "memory_nope", arguments: {} });
    expect(unknown.isError).toBe(true);

    const { status, body } = await activityNow();
    expect(status).toBe(200);
    expect(body.bucket).toBe("minute");
    expect(body.totals).toMatchObject({ calls: 7, errors: 1 });
    expect(body.totals.tokens).toBeGreaterThan(0);
    expect(body.totals.p95_ms).toBeGreaterThanOrEqual(body.totals.p50_ms);
    expect(body.series.reduce((sum, bucket) => sum + bucket.calls, 0)).toBe(7);
    expect(body.series.length).toBeGreaterThanOrEqual(2);
    expect(body.series.some((bucket) => bucket.calls === 0)).toBe(true);
    expect(body.by_tool.map((entry) => [entry.key, entry.calls, entry.errors])).toEqual([
      ["memory_write_page", 4, 0],
      ["context_search", 2, 0],
      ["memory_nope", 1, 1],
    ]);
    expect(body.by_credential.map((entry) => [entry.key, entry.name, entry.calls])).toEqual([
      [agentId, "test", 7],
    ]);
    expect(body.by_session.map((entry) => [entry.key, entry.calls])).toEqual([[SESSION, 7]]);

    // Approve two, reject one, leave one pending: the counts follow.
    const [queue, other, , rejected] = writes;
    expect((await post(`/v1/approvals/${queue}/approve`)).status).toBe(200);
    expect((await post(`/v1/approvals/${other}/approve`)).status).toBe(200);
    expect((await post(`/v1/approvals/${rejected}/reject`, admin, { reason: "no" })).status).toBe(200);
    const counts = await get<ApprovalCounts>("/v1/approvals/counts");
    expect(counts.body).toEqual({ pending: 1, applied: 2, rejected: 1, expired: 0, conflict: 0 });

    const events = await get<{ events: { kind: string; detail: { outcome: string } }[] }>(
      "/v1/audit/events?kind=approval_decision&limit=10",
    );
    expect(events.body.events.map((event) => event.detail.outcome)).toEqual([
      "applied",
      "applied",
      "rejected",
    ]);
  });

  it("lists pages, shows one with versions and backlinks, and the graph around it", async () => {
    const list = await get<PageList>("/v1/memory/pages");
    expect(list.body.pages.map((page) => [page.scope, page.path, page.version])).toEqual([
      [PROJECT, "decisions/other", 1],
      [PROJECT, "decisions/queue", 1],
    ]);
    const firstPage = await get<PageList>("/v1/memory/pages?limit=1");
    expect(firstPage.body.pages.map((page) => page.path)).toEqual(["decisions/other"]);
    const secondPage = await get<PageList>(
      `/v1/memory/pages?limit=1&cursor=${encodeURIComponent(firstPage.body.next_cursor ?? "")}`,
    );
    expect(secondPage.body).toMatchObject({ pages: [{ path: "decisions/queue" }], next_cursor: null });
    const filtered = await get<PageList>("/v1/memory/pages?q=queue");
    expect(filtered.body.pages.map((page) => page.title)).toEqual(["Queue choice"]);

    const page = await get<PageDetail>(
      `/v1/memory/page?${new URLSearchParams({ scope: PROJECT, path: "decisions/other" })}`,
    );
    expect(page.status).toBe(200);
    expect(page.body.page).toMatchObject({ title: "Other decision", version: 1, flagged: false });
    expect(page.body.versions.map((version) => version.version)).toEqual([1]);
    expect(page.body.backlinks).toEqual([{ from: "decisions/queue", type: "links_to" }]);
    const missing = await get<{ error: string }>(
      `/v1/memory/page?${new URLSearchParams({ scope: PROJECT, path: "nope/nothing" })}`,
    );
    expect(missing).toMatchObject({ status: 404, body: { error: "not_found" } });

    const graph = await get<PageGraph>(
      `/v1/memory/graph?${new URLSearchParams({ scope: PROJECT, path: "decisions/queue", depth: "1" })}`,
    );
    expect(graph.body.center).toEqual({ scope: PROJECT, path: "decisions/queue" });
    expect(graph.body.nodes.map((node) => [node.path, node.missing]).sort()).toEqual([
      ["decisions/other", false],
      ["decisions/queue", false],
      ["runbooks/missing", true],
    ]);
    expect(graph.body.edges).toHaveLength(2);
  });

  it("searches the context like context_search does, and audits the search", async () => {
    const search = await get<SearchResults>("/v1/context/search?q=zebrafish%20ledger&limit=5");
    expect(search.status).toBe(200);
    expect(search.body).toMatchObject({ query: "zebrafish ledger", count: 1, untrusted: true });
    expect(search.body.results[0]).toMatchObject({
      source: "docs",
      path: "billing.md",
      title: "Billing runbook",
    });
    const viaTool = await tool(contextMcp, "context_search", { query: "zebrafish ledger", limit: 5 });
    expect((viaTool.data.results as { document_id: string }[]).map((r) => r.document_id)).toEqual(
      search.body.results.map((r) => r.document_id),
    );
    const { body } = await activityNow();
    expect(body.by_tool.find((entry) => entry.key === "context_search")?.calls).toBe(4);
    expect(body.totals.calls).toBe(9);
  });

  it("answers a session's timeline across credentials, as of a time, with content only for its recorder", async () => {
    const other = await enrolledCredential(server.url, root);
    // A credential that both records and reads the audit: it sees its own events' content, no one else's.
    const recorder = await enrolledCredential(server.url, root, "memory:write,audit:read");
    const hook = (token: string, event: Record<string, unknown>) =>
      post<{ id: string }>("/v1/memory", token, { session_id: SESSION, project: PROJECT, ...event });
    const first = await hook(agent, { event: "session_start", data: { n: 1, prompt: "agent secret" } });
    expect(first.status).toBe(202);
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await hook(other, { event: "tool_used", data: { n: 2 }, valid_from: later });
    expect((await hook(recorder, { event: "prompt_submitted", data: { n: 3 } })).status).toBe(202);
    const future = `/v1/audit/timeline?session_id=${SESSION}&as_of=${encodeURIComponent(new Date(Date.now() + 7_200_000).toISOString())}`;
    // The hook events (the session's tool calls, listed among them, are the admin views' e2e's to check).
    const episodes = (timeline: SessionTimeline) =>
      timeline.events.filter((event) => event.source !== "tool_call");
    const shape = (timeline: SessionTimeline) =>
      episodes(timeline).map((event) => [event.kind, event.data?.n ?? null, event.data_withheld ?? false]);

    const now = await get<SessionTimeline>(`/v1/audit/timeline?session_id=${SESSION}`, recorder);
    expect(shape(now.body)).toEqual([
      ["session_start", null, true],
      ["prompt_submitted", 3, false],
    ]);
    const own = await get<SessionTimeline>(future, recorder);
    expect(shape(own.body)).toEqual([
      ["session_start", null, true],
      ["tool_used", null, true],
      ["prompt_submitted", 3, false],
    ]);
    expect(new Set(episodes(own.body).map((event) => event.credential_id)).size).toBe(3);

    // Every console role, by bearer or by a signed-in session, sees what happened and when, never the content.
    const sessions = await Promise.all(
      ["viewer", "approver", "admin"].map((role) => consoleSession(server.url, root, "--role", role)),
    );
    const readers: Record<string, string>[] = [
      { authorization: `Bearer ${viewer}` },
      { authorization: `Bearer ${admin}` },
      ...sessions.map((session) => ({ cookie: `ivoai_console=${session.token}` })),
    ];
    for (const headers of readers) {
      const response = await fetch(`${server.url}${future}`, { headers });
      const text = await response.text();
      expect([response.status, text.includes("agent secret")]).toEqual([200, false]);
      expect(shape(JSON.parse(text) as SessionTimeline)).toEqual([
        ["session_start", null, true],
        ["tool_used", null, true],
        ["prompt_submitted", null, true],
      ]);
    }
  });

  it("gives an overview", async () => {
    const { status, body } = await get<Overview>("/v1/admin/overview");
    expect(status).toBe(200);
    expect(body.ready.status).toBe("ready");
    expect(body.counts).toMatchObject({
      documents: 2,
      pages: 2,
      pending_approvals: 1,
      oauth_clients_active: 0,
    });
    expect(body.counts.clients_active).toBeGreaterThanOrEqual(4);
    expect(body.last_ingest).toMatchObject({ connector: "docs", unchanged: 2, complete: true });
  });

  it("revokes an enrolled client: its next request is 401, and the revocation is audited", async () => {
    const victim = await enrolledCredential(server.url, root);
    const victimId = (await get<{ caller: { id: string } }>("/v1/admin/status", victim)).body.caller.id;
    const listed = await get<{ clients: EnrolledClient[] }>("/v1/admin/clients", viewer);
    expect(listed.body.clients.find((client) => client.id === victimId)?.revoked_at).toBeNull();
    expect((await post(`/v1/admin/clients/${victimId}/revoke`, viewer)).status).toBe(403);
    expect((await get("/v1/admin/status", victim)).status).toBe(200);

    const revoked = await post<EnrolledClient>(`/v1/admin/clients/${victimId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).not.toBeNull();
    const next = await get<{ error: string }>("/v1/admin/status", victim);
    expect(next).toMatchObject({ status: 401, body: { error: "invalid_token" } });
    expect((await post("/v1/admin/clients/cli_nope/revoke")).status).toBe(404);

    const audit = await get<{ events: { kind: string; actor: string; detail: Record<string, unknown> }[] }>(
      "/v1/audit/events?kind=client_revoked",
    );
    expect(audit.body.events).toHaveLength(1);
    expect(audit.body.events[0]?.detail).toMatchObject({ target: "client", id: victimId });
    expect(audit.body.events[0]?.actor).toMatch(/^test \(cli_/);
  });

  it("revokes an OAuth grant: its access token is refused on /mcp", async () => {
    const activation = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { client_id, tokens } = await obtainTokens(server.url, activation.code, "context:read");
    const toolsList = () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    expect((await toolsList()).status).toBe(200);

    const listed = await get<{ clients: WebClient[] }>("/v1/admin/oauth-clients", viewer);
    const client = listed.body.clients.find((entry) => entry.client_id === client_id);
    expect(client?.grants).toHaveLength(1);
    const grantId = client?.grants[0]?.id as string;
    expect((await post(`/v1/admin/grants/${grantId}/revoke`, viewer)).status).toBe(403);

    const revoked = await post<WebClient>(`/v1/admin/grants/${grantId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.client_id).toBe(client_id);
    expect(revoked.body.revoked_at).toBeNull();
    expect(revoked.body.grants[0]?.revoked_at).not.toBeNull();
    expect((await toolsList()).status).toBe(401);

    const gone = await post<WebClient>(`/v1/admin/oauth-clients/${client_id}/revoke`);
    expect(gone.body.revoked_at).not.toBeNull();
    expect((await get<Overview>("/v1/admin/overview")).body.counts.oauth_clients_active).toBe(0);
    expect((await post("/v1/admin/grants/fam_nope/revoke")).status).toBe(404);
  });

  it("enforces scopes", async () => {
    for (const route of [
      "/v1/audit/activity",
      "/v1/audit/events",
      `/v1/audit/timeline?session_id=${SESSION}`,
    ]) {
      const refused = await get<{ error: string }>(route, agent);
      expect(refused).toMatchObject({ status: 403, body: { error: "insufficient_scope" } });
    }
    expect((await get("/v1/admin/clients", agent)).status).toBe(403);
    expect((await get("/v1/admin/oauth-clients", agent)).status).toBe(403);
    expect((await get("/v1/approvals/counts", agent)).status).toBe(403);
    expect((await get("/v1/memory/pages", viewer)).status).toBe(403);
    expect((await get("/v1/context/search?q=x", viewer)).status).toBe(403);
    expect((await fetch(`${server.url}/v1/admin/overview`)).status).toBe(401);
  });

  it("answers bad query parameters with 400 JSON", async () => {
    const hour = 3_600_000;
    const bad = [
      "/v1/audit/activity?bucket=week",
      "/v1/audit/activity?since=yesterday",
      `/v1/audit/activity?since=${new Date(Date.now()).toISOString()}&until=${new Date(Date.now() - hour).toISOString()}`,
      `/v1/audit/activity?bucket=minute&since=${new Date(Date.now() - 30 * 24 * hour).toISOString()}`,
      "/v1/audit/events?limit=0",
      "/v1/audit/events?kind=bogus",
      "/v1/audit/timeline?session_id=x&as_of=soon",
      "/v1/memory/pages?limit=100000",
      "/v1/memory/pages?cursor=not-a-cursor",
      "/v1/memory/page?scope=x",
      "/v1/memory/page?scope=x&path=../etc",
      "/v1/memory/graph?scope=x&path=y&depth=3",
      "/v1/context/search",
      "/v1/context/search?q=x&limit=0",
    ];
    for (const route of bad) {
      const response = await get<{ error: string; message: string }>(route);
      expect([route, response.status, response.body.error]).toEqual([route, 400, "invalid_request"]);
      expect(response.body.message.length).toBeGreaterThan(0);
    }
  });
});
