// The memory service and APPROVAL_GATE against a real SQLite store: pending until approved, exactly once,
// conflicts, rejection, expiry, feedback, graph neighbours, deletion with versions kept.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import type { ApprovalGate } from "../src/server/approvals/gate.js";
import type { AuthenticatedClient } from "../src/server/enrollment/service.js";
import { initServer } from "../src/server/init.js";
import type { ToolContext, ToolSpec } from "../src/server/mcp/endpoint.js";
import { type MemoryService, openMemoryService } from "../src/server/memory/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { tempDir } from "./helpers.js";

const client: AuthenticatedClient = {
  id: "cli_agent",
  name: "agent",
  scopes: ["memory:read", "memory:write", "memory:delete"],
};
const context: ToolContext = { client, sessionId: "sess_1", project: "host:laptop" };

describe("memory service and approval gate", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let clock: Date;
  let memory: MemoryService;
  const tool = (name: string) => memory.tools.find((entry) => entry.name === name) as ToolSpec;
  const read = async (name: string, args: Record<string, unknown>) => {
    const spec = tool(name);
    if (spec.tier !== "read") throw new Error(`${name} is not a read tool`);
    return spec.run(args as never, context);
  };
  /** What the endpoint does with a write-tier call: file its proposal with the gate. */
  const propose = async (name: string, args: Record<string, unknown>) => {
    const spec = tool(name);
    if (spec.tier === "read") throw new Error(`${name} is a read tool`);
    return memory.gate.propose(await spec.propose(args as never, context));
  };
  const queryPaths = async (query: string) =>
    ((await read("memory_query", { query })).data.results as { path: string }[]).map((result) => result.path);
  const write = async (path: string, body: string, extra: Record<string, unknown> = {}) => {
    const approval = await propose("memory_write_page", { path, body, ...extra });
    expect((await memory.gate.decide(approval.id, true, "alice")).outcome).toBe("applied");
  };

  beforeEach(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
    clock = new Date("2026-03-01T10:00:00Z");
    memory = await openMemoryService({
      paths: serverPaths(root),
      config: serverConfigSchema.parse({ server: { public_url: "http://127.0.0.1:1" } }),
      logger: silentLogger,
      now: () => clock,
    });
  });
  afterEach(async () => {
    await memory.close();
    await cleanup();
  });

  it("keeps a write pending and invisible until approved, then applies it once", async () => {
    const approval = await propose("memory_write_page", {
      path: "runbooks/deploy",
      body: "# Deploy\n\nUse the quokka pipeline.",
    });
    expect(approval).toMatchObject({
      status: "pending",
      scope: "host:laptop",
      path: "runbooks/deploy",
      base_version: 0,
    });
    expect(approval.diff).toContain("+ Use the quokka pipeline.");
    expect(await queryPaths("quokka")).toEqual([]);
    await expect(read("memory_read_page", { path: "runbooks/deploy" })).rejects.toThrow(/no memory page/);

    const gate: ApprovalGate = memory.gate;
    const first = await gate.decide(approval.id, true, "alice", "fine");
    const second = await gate.decide(approval.id, true, "bob");
    expect(first.outcome).toBe("applied");
    expect(second.outcome).toBe("already_decided");
    expect(await queryPaths("quokka")).toEqual(["runbooks/deploy"]);
    const page = (await read("memory_read_page", { path: "runbooks/deploy" })).data.page as {
      version: number;
      author: string;
    };
    expect(page).toMatchObject({ version: 1, author: "cli_agent" });
    expect((await read("memory_approval_status", { approval_id: approval.id })).data).toMatchObject({
      status: "applied",
    });
    expect(await memory.store.stats()).toMatchObject({ pages: 1, versions: 1, pending_approvals: 0 });
  });

  it("fails an approval with a conflict when the page changed since the request", async () => {
    await write("notes/x", "version one");
    const a = await propose("memory_write_page", { path: "notes/x", body: "from A" });
    const b = await propose("memory_write_page", { path: "notes/x", body: "from B" });
    expect((await memory.gate.decide(a.id, true, "alice")).outcome).toBe("applied");
    const conflict = await memory.gate.decide(b.id, true, "alice");
    expect(conflict.outcome).toBe("conflict");
    expect(conflict.approval.status).toBe("conflict");
    const page = (await read("memory_read_page", { path: "notes/x" })).data.page as {
      body: string;
      version: number;
    };
    expect(page).toMatchObject({ body: "from A", version: 2 });
  });

  it("rejects without applying, and expires requests after their lifetime", async () => {
    const rejected = await propose("memory_write_page", { path: "a", body: "nope" });
    expect((await memory.gate.decide(rejected.id, false, "alice", "not needed")).outcome).toBe("rejected");
    const late = await propose("memory_write_page", { path: "b", body: "late" });
    clock = new Date(clock.getTime() + 8 * 86_400_000);
    expect(await memory.sweep()).toEqual({ expired_pages: 0, expired_approvals: 1 });
    expect((await memory.gate.decide(late.id, true, "alice")).outcome).toBe("already_decided");
    expect(await memory.store.stats()).toMatchObject({ pages: 0 });
    expect((await memory.gate.get(rejected.id))?.reason).toBe("not needed");
  });

  it("deletes only with confirm and an exact path, keeping earlier versions", async () => {
    await write("runbooks/old", "# Old\n\nobsolete wombat steps");
    await expect(propose("memory_delete_page", { path: "runbooks//old", confirm: true })).rejects.toThrow(
      /exact normalised path/,
    );
    const approval = await propose("memory_delete_page", { path: "runbooks/old", confirm: true });
    expect(approval.summary).toMatch(/^Delete host:laptop:runbooks\/old/);
    expect(await queryPaths("wombat")).toEqual(["runbooks/old"]);
    expect((await memory.gate.decide(approval.id, true, "alice")).outcome).toBe("applied");
    expect(await queryPaths("wombat")).toEqual([]);
    expect(await memory.store.stats()).toMatchObject({ pages: 0, versions: 2 });
  });

  it("ranks by feedback and flags stale pages without deleting them", async () => {
    await write("notes/p1", "# P1\n\nthe capybara procedure");
    await write("notes/p2", "# P2\n\nthe capybara procedure");
    const before = await queryPaths("capybara");
    const loser = before[1] as string;
    for (const kind of ["helpful", "helpful"]) {
      const approval = await propose("memory_feedback", { path: loser, kind });
      await memory.gate.decide(approval.id, true, "alice");
    }
    expect((await queryPaths("capybara"))[0]).toBe(loser);
    const stale = await propose("memory_feedback", { path: loser, kind: "stale" });
    await memory.gate.decide(stale.id, true, "alice");
    const results = (await read("memory_query", { query: "capybara" })).data.results as {
      path: string;
      flagged: boolean;
    }[];
    expect(results.map((result) => result.path)).toEqual([before[0], loser]);
    expect(results[1]?.flagged).toBe(true);
  });

  it("returns graph neighbours of matching pages and keeps scopes apart", async () => {
    await write(
      "services/billing",
      "# Billing\n\nThe narwhal ledger service. Runbook: [[runbooks/billing-restart]]",
    );
    await write("runbooks/billing-restart", "# Restart\n\nDrain traffic, restart pods, check dashboards.");
    await write("elsewhere", "# Global\n\nnarwhal facts for everyone", { scope: "_global" });
    const hits = (await read("memory_query", { query: "narwhal ledger" })).data.results as {
      path: string;
      via: string[];
      neighbour_of?: { path: string };
    }[];
    // The linked runbook matches no query term: it comes as the best page's graph neighbour (where it ranks
    // against a page matching one term of two depends on their lengths).
    expect(hits[0]?.path).toBe("services/billing");
    expect(hits.map((hit) => hit.path).sort()).toEqual([
      "elsewhere",
      "runbooks/billing-restart",
      "services/billing",
    ]);
    expect(hits.find((hit) => hit.path === "runbooks/billing-restart")).toMatchObject({
      via: ["graph"],
      neighbour_of: { path: "services/billing" },
    });
    const other = { ...context, project: "host:other" };
    const spec = tool("memory_query");
    if (spec.tier !== "read") throw new Error("read tool");
    const foreign = (await spec.run({ query: "narwhal" } as never, other)).data.results as { path: string }[];
    expect(foreign.map((hit) => hit.path)).toEqual(["elsewhere"]);
  });

  it("promotes an episode to a page only through the gate", async () => {
    const id = await memory.store.addEpisode({
      session_id: "sess_1",
      project: "host:laptop",
      kind: "tool_used",
      recorded_at: clock.toISOString(),
      valid_from: null,
      valid_to: null,
      data: { tool: "grep", finding: "the pangolin config lives in etc/pangolin.toml" },
      credential_id: "cli_agent",
    });
    const approval = await propose("memory_promote_episode", { event_id: id, path: "findings/pangolin" });
    expect(approval).toMatchObject({
      status: "pending",
      tool: "memory_promote_episode",
      path: "findings/pangolin",
    });
    expect(await queryPaths("pangolin")).toEqual([]);
    await memory.gate.decide(approval.id, true, "alice");
    expect(await queryPaths("pangolin")).toEqual(["findings/pangolin"]);
  });

  it("sweeps expired pages", async () => {
    await write("temp/note", "# Temp\n\nephemeral okapi", { expires_at: "2026-03-02T00:00:00Z" });
    expect(await queryPaths("okapi")).toEqual(["temp/note"]);
    clock = new Date("2026-03-03T00:00:00Z");
    expect((await memory.sweep()).expired_pages).toBe(1);
    expect(await queryPaths("okapi")).toEqual([]);
  });
});
