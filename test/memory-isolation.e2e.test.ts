// Memory hardening through the built server: episodes stay with the credential that recorded them, a
// credential cannot approve its own request, pending requests are capped per credential, and approval lists
// are paginated summaries whose size does not grow with the bodies behind them.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = { status: string; data: Record<string, unknown> };
type Summary = { id: string; diff_bytes: number; payload_bytes: number } & Record<string, unknown>;

const MAX_PENDING = 4;
const PROJECT = "git:acme/iso";

describe("memory isolation, self-approval, caps and pagination", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let approver: string;
  const clients: Client[] = [];

  const credential = (scopes?: string) => enrolledCredential(server.url, root, scopes);
  const mcp = async (token: string, session: string) => {
    const client = await connectMcp(`${server.url}/v1/memory/mcp`, token, {
      "x-ivoai-session-id": session,
      "x-ivoai-project": PROJECT,
    });
    clients.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    return { ...(result.structuredContent as Envelope), isError: result.isError === true };
  };
  const get = (token: string, route: string) =>
    fetch(`${server.url}${route}`, { headers: { authorization: `Bearer ${token}` } });
  const events = async (token: string, query: string) => {
    const response = await get(token, `/v1/memory/events?${query}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as { events: { id: string; kind: string }[] }).events;
  };
  const decide = (token: string, id: string, verb: "approve" | "reject") =>
    fetch(`${server.url}/v1/approvals/${id}/${verb}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    const file = path.join(root, "etc/ivoai/server.toml");
    const config = parseToml(await readFile(file, "utf8")) as { memory?: Record<string, unknown> };
    config.memory = { ...config.memory, max_pending_approvals_per_client: MAX_PENDING };
    await writeFile(file, stringifyToml(config));
    server = await startServer(root);
    approver = await credential("approvals:read,approvals:decide");
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await server?.stop();
    await cleanup();
  });

  it("shows episode events only to the credential that recorded them, under unguessable ids", async () => {
    const alice = await credential();
    const bob = await credential();
    const ids: string[] = [];
    for (const kind of ["session_start", "tool_used", "session_end"]) {
      const response = await fetch(`${server.url}/v1/memory`, {
        method: "POST",
        headers: { authorization: `Bearer ${alice}`, "content-type": "application/json" },
        body: JSON.stringify({
          session_id: "sess-alice",
          project: PROJECT,
          event: kind,
          data: { note: `alice ${kind} marmoset` },
        }),
      });
      expect(response.status).toBe(202);
      ids.push(((await response.json()) as { id: string }).id);
    }
    for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(new Set(ids).size).toBe(3);

    expect((await events(alice, "session_id=sess-alice")).map((event) => event.id).sort()).toEqual(
      [...ids].sort(),
    );
    expect(await events(bob, "session_id=sess-alice")).toEqual([]);
    expect(await events(bob, `scope=project&project=${encodeURIComponent(PROJECT)}`)).toEqual([]);

    const aliceMcp = await mcp(alice, "sess-alice");
    const bobMcp = await mcp(bob, "sess-alice");
    expect((await call(aliceMcp, "memory_episodes", {})).data.count).toBe(3);
    expect((await call(bobMcp, "memory_episodes", {})).data.count).toBe(0);
    expect((await call(bobMcp, "memory_episodes", { scope: "project" })).data.count).toBe(0);

    // Bob promoting Alice's event fails exactly like promoting an id that never existed.
    const stolen = ids[1] as string;
    const foreign = await call(bobMcp, "memory_promote_episode", { event_id: stolen, path: "loot/a" });
    const unknown = "evt_AAAAAAAAAAAAAAAAAAAAAA";
    const missing = await call(bobMcp, "memory_promote_episode", { event_id: unknown, path: "loot/a" });
    expect(foreign.isError).toBe(true);
    expect(foreign.status).toBe("FAILED");
    expect(JSON.stringify(foreign.data).replace(stolen, "ID")).toBe(
      JSON.stringify(missing.data).replace(unknown, "ID"),
    );
    expect(JSON.stringify(foreign)).not.toContain("marmoset");

    // Alice promotes her own; an approver sees the event's data in the request.
    const own = await call(aliceMcp, "memory_promote_episode", { event_id: stolen, path: "findings/m" });
    expect(own.status).toBe("PENDING_HUMAN_APPROVAL");
    const shown = await get(approver, `/v1/approvals/${own.data.approval_id}`);
    expect(((await shown.json()) as { diff: string }).diff).toContain("alice tool_used marmoset");
  });

  it("refuses a credential approving its own request over HTTP; the local operator may", async () => {
    const both = await credential("memory:read,memory:write,approvals:read,approvals:decide");
    const agent = await mcp(both, "sess-self");
    const pending = await call(agent, "memory_write_page", { path: "self/approved", body: "# Mine\n\ntext" });
    const id = pending.data.approval_id as string;
    const refused = await decide(both, id, "approve");
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: "self_approval",
      message: expect.stringMatching(/cannot approve its own request/),
    });
    expect((await call(agent, "memory_approval_status", { approval_id: id })).data.status).toBe("pending");

    const operator = await runIvoai(["server", "approvals", "approve", id, "--root", root, "--json"]);
    expect(operator.code).toBe(0);
    expect((await call(agent, "memory_approval_status", { approval_id: id })).data.status).toBe("applied");
  });

  it("caps the pending requests of one credential and leaves everyone else working", async () => {
    const greedy = await mcp(await credential(), "sess-greedy");
    const ids: string[] = [];
    for (let index = 0; index < MAX_PENDING; index++) {
      const result = await call(greedy, "memory_write_page", { path: `greedy/${index}`, body: "x" });
      expect(result.status).toBe("PENDING_HUMAN_APPROVAL");
      ids.push(result.data.approval_id as string);
    }
    const refused = await call(greedy, "memory_write_page", { path: "greedy/over", body: "x" });
    expect(refused.isError).toBe(true);
    expect(String(refused.data.error)).toMatch(
      new RegExp(`too many pending approval requests: .*already has ${MAX_PENDING}`),
    );

    const other = await mcp(await credential(), "sess-other");
    expect((await call(other, "memory_write_page", { path: "other/one", body: "y" })).status).toBe(
      "PENDING_HUMAN_APPROVAL",
    );
    // A decision frees one slot, and requests racing for it cannot overshoot the cap.
    expect((await decide(approver, ids[0] as string, "reject")).status).toBe(200);
    const racing = await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        call(greedy, "memory_write_page", { path: `greedy/again-${index}`, body: "x" }),
      ),
    );
    expect(racing.filter((result) => result.status === "PENDING_HUMAN_APPROVAL")).toHaveLength(1);
  });

  it("pages the approval list so that every request shows once, without bodies, whatever their size", async () => {
    const big = `# Big\n\n${"wombat ".repeat(20_000)}`;
    const created: string[] = [];
    for (let writer = 0; writer < 3; writer++) {
      const client = await mcp(await credential(), `sess-big-${writer}`);
      for (let index = 0; index < MAX_PENDING; index++) {
        const result = await call(client, "memory_write_page", { path: `big/${writer}-${index}`, body: big });
        created.push(result.data.approval_id as string);
      }
    }

    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await get(
        approver,
        `/v1/approvals?status=pending&limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(response.status).toBe(200);
      const text = await response.text();
      // Five summaries of ~140 KB requests: the page stays small.
      expect(text.length).toBeLessThan(8 * 1024);
      const page = JSON.parse(text) as { approvals: Summary[]; next_cursor: string | null };
      expect(page.approvals.length).toBeLessThanOrEqual(5);
      for (const row of page.approvals) {
        expect(row).not.toHaveProperty("diff");
        expect(row).not.toHaveProperty("payload");
      }
      walked.push(...page.approvals.map((row) => row.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    expect(new Set(walked).size).toBe(walked.length);
    for (const id of created) expect(walked).toContain(id);
    const whole = (await (await get(approver, "/v1/approvals?status=pending&limit=200")).json()) as {
      approvals: Summary[];
      next_cursor: string | null;
    };
    expect(whole.next_cursor).toBeNull();
    expect(walked).toEqual(whole.approvals.map((row) => row.id));
    const bigRow = whole.approvals.find((row) => row.id === created[0]);
    expect(bigRow?.diff_bytes).toBeGreaterThan(big.length);

    expect((await get(approver, "/v1/approvals?cursor=not-a-cursor")).status).toBe(400);
    expect((await get(approver, "/v1/approvals?limit=100000")).status).toBe(400);

    // The CLI walks the same pages and tells a person how to get the next one.
    const cliWalked: string[] = [];
    let cliCursor: string | null = null;
    do {
      const args = ["server", "approvals", "list", "--root", root, "--limit", "7", "--json"];
      const result = await runIvoai(cliCursor ? [...args, "--cursor", cliCursor] : args);
      expect(result.code).toBe(0);
      const page = JSON.parse(result.stdout) as { approvals: Summary[]; next_cursor: string | null };
      cliWalked.push(...page.approvals.map((row) => row.id));
      cliCursor = page.next_cursor;
    } while (cliCursor);
    expect(cliWalked).toEqual(walked);
    const human = await runIvoai(["server", "approvals", "list", "--root", root, "--limit", "2"]);
    expect(human.code).toBe(0);
    expect(human.stdout.trim().split("\n")).toHaveLength(3);
    expect(human.stderr).toMatch(/more requests: ivoai server approvals list .*--cursor \S+/);
    expect(human.stdout).not.toContain("wombat");
    const bad = await runIvoai(["server", "approvals", "list", "--root", root, "--limit", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
  });
});
