// Three gateway replicas on one PostgreSQL (issue 16's end-to-end list): one enrollment code gives exactly one
// credential across them, a revocation made through one replica is refused by every replica on the next request,
// and a document ingested by another process is found through every replica within a second.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { racer } from "./enroll-racer.js";
import {
  addDocsConnector,
  connectMcp,
  createCode,
  enroll,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { createThrowawayDatabase, type ThrowawayDatabase, usePostgres } from "./postgres.js";

describe("three gateway replicas on one PostgreSQL", () => {
  let root = "";
  let cleanup: () => Promise<void> = async () => {};
  let database: ThrowawayDatabase | undefined;
  const replicas: RunningServer[] = [];

  beforeAll(async () => {
    database = await createThrowawayDatabase();
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
    // The tree switched to PostgreSQL: server.toml names the backend, the URL sits in a 0600 secrets file.
    await usePostgres(root, database.url);
    // One tree served by three processes: the first claims its pid file, the others run as --replica.
    replicas.push(await startServer(root));
    replicas.push(
      ...(await Promise.all([startServer(root, ["--replica"]), startServer(root, ["--replica"])])),
    );
  });
  afterAll(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.stop()));
    await cleanup();
    await database?.drop();
  });

  const get = (replica: RunningServer | undefined, route: string, credential: string) =>
    fetch(`${replica?.url}${route}`, { headers: { authorization: `Bearer ${credential}` } });

  it("issues exactly one credential when 20 processes race for one code across the replicas", async () => {
    const { id, code } = await createCode(root, ["--scopes", "clients:read"]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, index) => racer(replicas[index % 3]?.url ?? "", code)),
    );
    expect(results.filter((result) => result.status === 201)).toHaveLength(1);
    expect(results.filter((result) => result.status === 400)).toHaveLength(19);

    // The store is PostgreSQL's: its document holds the one client of that code.
    const client = new pg.Client({ connectionString: database?.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ doc: string }>(
        "SELECT doc FROM ivoai_enrollment.enrollment_state",
      );
      const state = JSON.parse(rows[0]?.doc ?? "{}") as {
        enrollments: { id: string; consumed_by: string | null }[];
        clients: { id: string; enrollment_id: string }[];
      };
      const won = state.clients.filter((entry) => entry.enrollment_id === id);
      expect(won).toHaveLength(1);
      expect(state.enrollments.find((entry) => entry.id === id)?.consumed_by).toBe(won[0]?.id);
    } finally {
      await client.end();
    }
  });

  it("refuses a client revoked through one replica on its next request to every replica", async () => {
    const enrolled = async (scopes: string, replica: RunningServer | undefined) => {
      const { code } = await createCode(root, ["--scopes", scopes]);
      const response = await enroll(replica?.url ?? "", code);
      expect(response.status).toBe(201);
      return (await response.json()) as { client_id: string; credential: string };
    };
    const laptop = await enrolled("clients:read", replicas[0]);
    const admin = await enrolled("clients:revoke", replicas[2]);
    // Every replica knows the credential (and has it cached) before the revocation.
    for (const replica of replicas)
      expect((await get(replica, "/v1/admin/clients", laptop.credential)).status).toBe(200);

    const revoked = await fetch(`${replicas[1]?.url}/v1/admin/clients/${laptop.client_id}/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.credential}` },
    });
    expect(revoked.status).toBe(200);
    for (const replica of replicas)
      expect((await get(replica, "/v1/admin/clients", laptop.credential)).status).toBe(401);

    // The CLI (one more process on the same PostgreSQL) sees the same store.
    const { clients } = JSON.parse(
      (await runIvoai(["server", "clients", "list", "--root", root, "--json"])).stdout,
    ) as { clients: { id: string; status: string }[] };
    expect(clients.find((entry) => entry.id === laptop.client_id)?.status).toBe("revoked");
  });

  it("finds a document ingested by one process through every replica", async () => {
    const docs = path.join(root, "docs");
    await mkdir(docs, { recursive: true });
    await addDocsConnector(root, docs);
    const credential = await enrolledCredential(replicas[0]?.url ?? "", root);
    const clients = await Promise.all(
      replicas.map((replica) => connectMcp(`${replica.url}/v1/mcp/context`, credential)),
    );
    const search = async (client: (typeof clients)[number]) => {
      const result = await client.callTool({
        name: "context_search",
        arguments: { query: "quokka rotation" },
      });
      const data = (result.structuredContent as { data: { results: { path: string }[] } }).data;
      return data.results.map((hit) => hit.path);
    };
    try {
      // Every replica has built its index (empty) before the ingest.
      for (const client of clients) expect(await search(client)).toEqual([]);
      await writeFile(
        path.join(docs, "oncall.md"),
        "# On call\n\nThe quokka rotation changes every Monday.\n",
      );
      const ingest = await runIvoai(["server", "ingest", "--root", root]);
      expect(ingest.code, ingest.stderr).toBe(0);
      // Each replica is asked until it finds the document (a notification may land just after a search, and a
      // replica checks at least every 500 ms without one); a replica that keeps a stale index never does. The
      // wait is generous for a busy host, not a promise of speed.
      const deadline = Date.now() + 30_000;
      const found = await Promise.all(
        clients.map(async (client) => {
          for (;;) {
            const paths = await search(client);
            if (paths.length > 0 || Date.now() > deadline) return paths;
          }
        }),
      );
      for (const paths of found) expect(paths).toEqual(["oncall.md"]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });

  it("names the shared store in doctor without its password", async () => {
    const credential = await enrolledCredential(replicas[1]?.url ?? "", root, "doctor:read");
    const doctor = (await (await get(replicas[1], "/v1/admin/doctor", credential)).json()) as {
      status: string;
      checks: { name: string; status: string; detail: string }[];
    };
    expect(doctor.status).toBe("ok");
    const store = doctor.checks.find((check) => check.name === "store");
    expect(store).toMatchObject({ status: "ok" });
    const url = new URL(database?.url ?? "");
    expect(store?.detail).toContain(
      `postgres ${url.username}@${url.hostname}:${url.port || 5432}${url.pathname} (server `,
    );
    expect(doctor.checks.find((check) => check.name === "postgres_url")?.status).toBe("ok");
    expect(JSON.stringify(doctor)).not.toContain(new URL(database?.url ?? "").password);
  });

  const memoryAgent = async (replica: RunningServer | undefined) =>
    connectMcp(`${replica?.url}/v1/memory/mcp`, await enrolledCredential(replica?.url ?? "", root), {
      "x-ivoai-session-id": "sess-replicas",
      "x-ivoai-project": "git:acme/replicas",
    });
  const propose = async (agent: Client, path: string) => {
    const result = await agent.callTool({
      name: "memory_write_page",
      arguments: { path, body: `# ${path}\n\nA note written for the replicas test: ${path}.` },
    });
    const envelope = result.structuredContent as { status: string; data: { approval_id?: string } };
    return envelope.status === "PENDING_HUMAN_APPROVAL" ? envelope.data.approval_id : undefined;
  };
  const listApprovals = async (status: string): Promise<string[]> => {
    const ids: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page = await runIvoai([
        "server",
        "approvals",
        "list",
        "--status",
        status,
        "--limit",
        "200",
        "--root",
        root,
        "--json",
        ...(cursor ? ["--cursor", cursor] : []),
      ]);
      const body = JSON.parse(page.stdout) as { approvals: { id: string }[]; next_cursor: string | null };
      ids.push(...body.approvals.map((approval) => approval.id));
      cursor = body.next_cursor;
      if (!cursor) return ids;
    }
  };

  it("applies each of 50 approvals once, decided at the same time through every replica and the CLI", async () => {
    const agent = await memoryAgent(replicas[0]);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 50; i++) ids.push((await propose(agent, `notes/n${i}`)) as string);
      expect(ids.every((id) => /^apr_/.test(id))).toBe(true);
      const approvers = await Promise.all(
        replicas.map((replica) => enrolledCredential(replica.url, root, "approvals:read,approvals:decide")),
      );
      const outcomes = await Promise.all(
        ids.flatMap((id, i) => [
          ...replicas.map(async (replica, k) => {
            const response = await fetch(`${replica.url}/v1/approvals/${id}/approve`, {
              method: "POST",
              headers: { authorization: `Bearer ${approvers[k]}`, "content-type": "application/json" },
              body: "{}",
            });
            const body = (await response.json()) as { outcome?: string };
            // A refusal (a problem document) shows as its status and text, so a failure says what happened.
            return { id, outcome: body.outcome ?? `HTTP ${response.status}: ${JSON.stringify(body)}` };
          }),
          // Every tenth one is decided by the operator's CLI too.
          ...(i % 10 === 0
            ? [
                runIvoai(["server", "approvals", "approve", id, "--root", root, "--json"]).then((result) => ({
                  id,
                  outcome: (JSON.parse(result.stdout) as { outcome: string }).outcome,
                })),
              ]
            : []),
        ]),
      );
      for (const id of ids) {
        const mine = outcomes.filter((entry) => entry.id === id).map((entry) => entry.outcome);
        expect(mine.filter((outcome) => outcome !== "applied" && outcome !== "already_decided")).toEqual([]);
        expect(
          mine.filter((outcome) => outcome === "applied"),
          id,
        ).toHaveLength(1);
      }
      expect((await listApprovals("applied")).sort()).toEqual([...ids].sort());
      // Each page exists once, at version 1, whichever replica reads it.
      const reader = await memoryAgent(replicas[2]);
      try {
        for (const i of [0, 17, 49]) {
          const read = await reader.callTool({
            name: "memory_read_page",
            arguments: { path: `notes/n${i}` },
          });
          expect((read.structuredContent as { data: { page: { version: number } } }).data.page.version).toBe(
            1,
          );
        }
      } finally {
        await reader.close();
      }
    } finally {
      await agent.close();
    }
  });

  it("loses no acknowledged write when a replica is killed with SIGKILL in the middle of writes", async () => {
    const doomed = await startServer(root, ["--replica"]);
    const agent = await memoryAgent(doomed);
    const acknowledged: string[] = [];
    let enough: () => void = () => {};
    const twenty = new Promise<void>((resolve) => (enough = resolve));
    let stopped = false;
    const writer = async (w: number) => {
      for (let i = 0; !stopped; i++) {
        const id = await propose(agent, `killed/w${w}-${i}`).catch(() => undefined);
        if (stopped && !id) return;
        if (id) acknowledged.push(id);
        if (acknowledged.length >= 20) enough();
      }
    };
    const writers = Promise.all([0, 1, 2, 3].map(writer));
    await twenty;
    await doomed.stop("SIGKILL");
    stopped = true;
    await writers;
    await agent.close().catch(() => {});
    expect(acknowledged.length).toBeGreaterThanOrEqual(20);
    const pending = await listApprovals("pending");
    for (const id of acknowledged) expect(pending).toContain(id);
  });
});
