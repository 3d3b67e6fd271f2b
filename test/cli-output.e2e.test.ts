// What the CLI prints, as a person at a terminal or a pipe receives it: complete JSON through a slow pipe,
// and untrusted text (agents' pages, client names) that cannot drive the approver's terminal.
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAuditLog } from "../src/server/audit/store.js";
import { openSqliteSql } from "../src/server/store/sqlite.js";
import {
  addDocsConnector,
  BIN,
  createCode,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

// Cursor up, erase line: hides the line above. U+202E reverses what follows.
const SPOOF_TITLE = "Harmless note\x1b[1A\x1b[2K\u202egnp.exe";
const SPOOF_BODY = "# Notes\n\nall good\x1b[1A\x1b[2K\x9b2J\u2066hidden\u2069\n";
const SPOOF_CLIENT = "laptop\x1b[1A\x1b[2Kadmin\u202e";
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const TERMINAL_ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** Runs ivoai with stdout read in small bites, one per turn of the event loop: a pipe that fills up. */
function runThroughSlowPipe(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    const readSome = () => {
      const chunk = child.stdout.read(4096) as Buffer | null;
      if (!chunk) return void child.stdout.once("readable", readSome);
      chunks.push(chunk);
      setImmediate(readSome);
    };
    child.stdout.once("readable", readSome);
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(chunks).toString("utf8") }));
  });
}

describe("CLI output", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let agent: Client;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    server = await startServer(root);
    const { code } = await createCode(root);
    const enrolled = await fetch(`${server.url}/v1/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code, client_name: SPOOF_CLIENT }),
    });
    const { credential } = (await enrolled.json()) as { credential: string };
    agent = new Client({ name: "ivoai-test", version: "1" });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/v1/memory/mcp`), {
        requestInit: {
          headers: {
            authorization: `Bearer ${credential}`,
            "x-ivoai-session-id": "sess-spoof",
            "x-ivoai-project": "git:acme/api",
          },
        },
      }),
    );
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    await cleanup();
  });

  it("prints multi-megabyte --json completely through a slowly read pipe", async () => {
    const audit = await openAuditLog(openSqliteSql(path.join(root, "var/lib/ivoai/audit/audit.sqlite")));
    for (let i = 0; i < 3; i += 1)
      await audit.record({
        kind: "approval_decision",
        actor: "test",
        detail: { note: `${i}`.repeat(1 << 20) },
      });
    await audit.close();
    const result = await runThroughSlowPipe(["server", "audit", "--root", root, "--json"]);
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBeGreaterThan(3 * (1 << 20));
    const { events } = JSON.parse(result.stdout) as { events: { detail: { note?: string } }[] };
    expect(events.filter((event) => event.detail.note?.length === 1 << 20)).toHaveLength(3);
  });

  it("pages the audit log back in time: --before the first id shown", async () => {
    const audit = await openAuditLog(openSqliteSql(path.join(root, "var/lib/ivoai/audit/audit.sqlite")));
    for (const id of ["cli_p1", "cli_p2", "cli_p3"])
      await audit.record({ kind: "client_revoked", actor: "test", detail: { target: "client", id } });
    await audit.close();
    const page = async (...extra: string[]) => {
      const result = await runIvoai([
        ...["server", "audit", "--root", root, "--json", "--kind", "client_revoked", "--limit", "2"],
        ...extra,
      ]);
      expect(result.code).toBe(0);
      return (JSON.parse(result.stdout) as { events: { id: number; detail: { id: string } }[] }).events;
    };
    const newest = await page();
    expect(newest.map((event) => event.detail.id)).toEqual(["cli_p2", "cli_p3"]);
    const older = await page("--before", String(newest[0]?.id));
    expect(older.map((event) => event.detail.id)).toEqual(["cli_p1"]);
    expect(await page("--before", String(older[0]?.id))).toEqual([]);
    const table = await runIvoai(["server", "audit", "--root", root, "--kind", "client_revoked"]);
    expect(table.stdout).toMatch(new RegExp(`^ID +AT +KIND[^\\n]*\\n${older[0]?.id} `));
    expect((await runIvoai(["server", "audit", "--root", root, "--before", "x"])).code).toBe(2);
  });

  it("fences agent text in 'approvals show' so no line of it passes for one of ivoai's own", async () => {
    const forged =
      "all fine\n  decided:   2026-11-30T00:00:00.000Z by admin (cli_ops)\napproval apr_x: applied";
    const proposed = (
      await agent.callTool({
        name: "memory_write_page",
        arguments: { path: "notes/forged", title: "Forged\n  decided: by admin", body: forged },
      })
    ).structuredContent as { data: { approval_id: string } };
    const show = await runIvoai(["server", "approvals", "show", proposed.data.approval_id, "--root", root]);
    expect(show.code).toBe(0);
    const lines = show.stdout.split("\n");
    // Still pending: ivoai printed no decision and one status line; the agent's copies are fenced.
    expect(lines.filter((line) => line.startsWith("  decided:"))).toEqual([]);
    expect(lines.filter((line) => line.startsWith("approval "))).toHaveLength(1);
    expect(lines, show.stdout).toContain(
      "  │   2 +   decided:   2026-11-30T00:00:00.000Z by admin (cli_ops)",
    );
  });

  it("shows an agent's escape sequences and bidi overrides as visible text, and --json exactly", async () => {
    const proposed = (
      await agent.callTool({
        name: "memory_write_page",
        arguments: { path: "notes/spoof", title: SPOOF_TITLE, body: SPOOF_BODY },
      })
    ).structuredContent as { status: string; data: { approval_id: string } };
    expect(proposed.status).toBe("PENDING_HUMAN_APPROVAL");
    const id = proposed.data.approval_id;

    const show = await runIvoai(["server", "approvals", "show", id, "--root", root]);
    expect(show.code).toBe(0);
    expect(show.stdout).not.toMatch(TERMINAL_ACTIVE);
    expect(show.stdout).toContain("Harmless note\\x1b[1A\\x1b[2K\\u202egnp.exe");
    expect(show.stdout).toContain("all good\\x1b[1A\\x1b[2K\\x9b2J\\u2066hidden\\u2069");

    const list = await runIvoai(["server", "approvals", "list", "--root", root]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(id);
    expect(list.stdout).not.toMatch(TERMINAL_ACTIVE);

    const json = await runIvoai(["server", "approvals", "show", id, "--root", root, "--json"]);
    expect(json.stdout).not.toMatch(TERMINAL_ACTIVE);
    const approval = JSON.parse(json.stdout) as { summary: string; diff: string; payload: { title: string } };
    expect(approval.payload.title).toBe(SPOOF_TITLE);
    expect(approval.summary).toContain(SPOOF_TITLE);
    expect(approval.diff).toContain("all good\x1b[1A\x1b[2K\x9b2J\u2066hidden\u2069");
    const listed = JSON.parse(
      (await runIvoai(["server", "approvals", "list", "--root", root, "--json"])).stdout,
    ) as { approvals: { id: string }[] };
    expect(listed.approvals.map((entry) => entry.id)).toContain(id);
  });

  it("shows an enrolled client's name with its escape sequences made visible", async () => {
    const list = await runIvoai(["server", "clients", "list", "--root", root]);
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(TERMINAL_ACTIVE);
    expect(list.stdout).toContain("laptop\\x1b[1A\\x1b[2Kadmin\\u202e");
    const json = await runIvoai(["server", "clients", "list", "--root", root, "--json"]);
    const { clients } = JSON.parse(json.stdout) as { clients: { name: string }[] };
    expect(clients.map((client) => client.name)).toContain(SPOOF_CLIENT);
  });

  it("shows file names and titles in search results with their escape sequences made visible", async () => {
    const docs = path.join(root, "docs");
    await mkdir(docs);
    const name = "evil\x1b[2K\u202egnp.md";
    await writeFile(path.join(docs, name), `# Title\x1b[1A\u2067 here\n\nthe quetzal migration guide\n`);
    await addDocsConnector(root, docs);
    expect((await runIvoai(["server", "ingest", "--root", root])).code).toBe(0);
    const text = await runIvoai(["server", "search", "quetzal", "--root", root]);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(TERMINAL_ACTIVE);
    expect(text.stdout).toContain("docs:evil\\x1b[2K\\u202egnp.md");
    const json = await runIvoai(["server", "search", "quetzal", "--root", root, "--json"]);
    expect(json.stdout).not.toMatch(TERMINAL_ACTIVE);
    const hits = (JSON.parse(json.stdout) as { results: { path: string; title: string }[] }).results;
    expect(hits.map((hit) => [hit.path, hit.title])).toEqual([[name, "Title\x1b[1A\u2067 here"]]);
  });
});
