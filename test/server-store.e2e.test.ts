// `ivoai server store set|show`: the PostgreSQL connection string only ever goes in through stdin, lands in a
// 0600 secrets file, and never comes back out (stdout, stderr, server.toml, --json).
import { promises as fs } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectMcp,
  createCode,
  enrolledCredential,
  initRoot,
  initWithDocs,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { createThrowawayDatabase, TEST_PG_URL } from "./postgres.js";

describe("ivoai server store", async () => {
  let root = "";
  let cleanup = async () => {};
  const password = new URL(TEST_PG_URL).password;
  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir());
    await initRoot(root);
  });
  afterAll(() => cleanup());
  const secretFile = () => path.join(root, "etc/ivoai/secrets/postgres.url");

  it("starts on SQLite, and refuses a URL that is not on stdin or does not work, writing nothing", async () => {
    const show = await runIvoai(["server", "store", "show", "--root", root, "--json"]);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).backend).toBe("sqlite");
    const noStdin = await runIvoai(["server", "store", "set", "postgres", "--root", root]);
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toMatch(/--url-stdin/);
    const notUrl = await runIvoai(["server", "store", "set", "postgres", "--url-stdin", "--root", root], {
      input: "host=localhost password=x\n",
    });
    expect(notUrl.code).toBe(2);
    const wrong = new URL(TEST_PG_URL);
    wrong.password = "not-the-password-123";
    const refused = await runIvoai(["server", "store", "set", "postgres", "--url-stdin", "--root", root], {
      input: `${wrong}\n`,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/PostgreSQL/);
    expect(refused.stderr + refused.stdout).not.toContain("not-the-password-123");
    await expect(fs.stat(secretFile())).rejects.toThrow();
    expect(await fs.readFile(path.join(root, "etc/ivoai/server.toml"), "utf8")).not.toMatch(/postgres/);
  });

  it("keeps a working URL in a 0600 file and never shows its password", async () => {
    const set = await runIvoai(["server", "store", "set", "postgres", "--url-stdin", "--root", root], {
      input: `${TEST_PG_URL}\n`,
    });
    expect(set.code, set.stderr).toBe(0);
    const stat = await fs.stat(secretFile());
    expect(stat.mode & 0o777).toBe(0o600);
    expect((await fs.readFile(secretFile(), "utf8")).trim()).toBe(TEST_PG_URL);
    const config = await fs.readFile(path.join(root, "etc/ivoai/server.toml"), "utf8");
    expect(config).toMatch(/\[store\]\s*\nbackend = "postgres"/);
    expect(config).not.toContain(password);
    const show = await runIvoai(["server", "store", "show", "--root", root, "--json"]);
    expect(show.code).toBe(0);
    const view = JSON.parse(show.stdout);
    expect(view).toMatchObject({ backend: "postgres", reachable: true, target: { user: "ivoai_ci" } });
    for (const output of [set.stdout, set.stderr, show.stdout, show.stderr])
      expect(output).not.toContain(password);
    // A secrets file others can read is refused, not used.
    await fs.chmod(secretFile(), 0o644);
    const loose = await runIvoai(["server", "store", "show", "--root", root]);
    expect(loose.code).not.toBe(0);
    expect(loose.stderr).toMatch(/chmod 600/);
    await fs.chmod(secretFile(), 0o600);
    const back = await runIvoai(["server", "store", "set", "sqlite", "--root", root, "--json"]);
    expect(JSON.parse(back.stdout).backend).toBe("sqlite");
    await expect(fs.stat(secretFile())).rejects.toThrow(/ENOENT/);
  });
});

describe("ivoai server store migrate --to postgres", async () => {
  it("copies an ingested SQLite server, verified and idempotent, and serves it from PostgreSQL", async () => {
    const { dir, cleanup } = await tempDir();
    const database = await createThrowawayDatabase();
    try {
      const root = path.join(dir, "root");
      const docs = path.join(dir, "docs");
      await fs.mkdir(docs);
      await fs.writeFile(
        path.join(docs, "billing.md"),
        "# Billing\n\nThe billing service retries failed invoices nightly.\n",
      );
      await fs.writeFile(
        path.join(docs, "deploy.md"),
        "# Deploys\n\nDeploys run on Tuesdays after the freeze.\n",
      );
      await initWithDocs(root, docs);
      const pending = await createCode(root);
      const activation = await runIvoai(["server", "activation", "create", "--root", root, "--json"]);
      expect(activation.code, activation.stderr).toBe(0);
      const login = await runIvoai(["server", "console", "login", "--root", root, "--json"]);
      expect(login.code, login.stderr).toBe(0);
      // A server that ran: an enrolled client and its audit records.
      const server = await startServer(root);
      const client = await connectMcp(
        `${server.url}/v1/mcp/context`,
        await enrolledCredential(server.url, root),
      );
      await client.callTool({ name: "context_search", arguments: { query: "deploys" } });
      await client.close();
      await server.stop();
      const before = await runIvoai(["server", "search", "invoice retries", "--root", root, "--json"]);
      expect(before.code, before.stderr).toBe(0);
      const set = await runIvoai(["server", "store", "set", "postgres", "--url-stdin", "--root", root], {
        input: database.url,
      });
      expect(set.code, set.stderr).toBe(0);
      const migrate = ["server", "store", "migrate", "--to", "postgres", "--root", root, "--json"];
      const first = await runIvoai(migrate);
      expect(first.code, first.stderr).toBe(0);
      const context = JSON.parse(first.stdout).stores.find(
        (store: { store: string }) => store.store === "context",
      );
      const tables = Object.fromEntries(
        context.tables.map((table: { table: string; rows: number; action: string }) => [table.table, table]),
      );
      expect(tables.documents).toMatchObject({ rows: 2, action: "copied" });
      expect(tables.chunks).toMatchObject({ rows: 2, action: "copied" });
      const copied = JSON.parse(first.stdout).stores;
      expect(copied.map((store: { store: string }) => store.store)).toEqual([
        "enrollment",
        "oauth",
        "audit",
        "console",
        "context",
        "memory",
      ]);
      // The memory file the server created (its meta rows: schema, generation and instance) went too.
      expect(copied[5].tables.find((table: { table: string }) => table.table === "meta")).toMatchObject({
        rows: 3,
        action: "copied",
      });
      const oauthRows = copied[1].tables.reduce(
        (sum: number, table: { rows: number }) => sum + table.rows,
        0,
      );
      expect(oauthRows).toBeGreaterThan(0);
      const second = await runIvoai(migrate);
      expect(second.code, second.stderr).toBe(0);
      const again = JSON.parse(second.stdout).stores.find(
        (store: { store: string }) => store.store === "context",
      );
      expect(again.tables.every((table: { action: string }) => table.action !== "copied")).toBe(true);
      // Served from PostgreSQL now: the enrollment code made on SQLite, the same ranking, and a new ingest
      // continues after the copied rows.
      const codes = await runIvoai(["server", "enrollment", "list", "--root", root, "--json"]);
      expect(codes.stdout).toContain(pending.id);
      expect(codes.stdout).not.toContain(pending.code);
      const audit = await runIvoai(["server", "audit", "--root", root, "--json"]);
      expect(audit.code, audit.stderr).toBe(0);
      expect(audit.stdout).toMatch(/"tool": "context_search"/);
      const after = await runIvoai(["server", "search", "invoice retries", "--root", root, "--json"]);
      expect(after.code, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout).results).toEqual(JSON.parse(before.stdout).results);
      await fs.writeFile(path.join(docs, "oncall.md"), "# On call\n\nThe pager rotates every Monday.\n");
      const ingest = await runIvoai(["server", "ingest", "--root", root, "--json"]);
      expect(ingest.code, ingest.stderr).toBe(0);
      const pager = await runIvoai(["server", "search", "pager rotation", "--root", root, "--json"]);
      expect(JSON.parse(pager.stdout).results[0]?.title).toBe("On call");
      // Written to since the copy: a new migrate refuses to overwrite it.
      const refused = await runIvoai(migrate);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/already holds other rows.*--force/);
      // Its stores are in PostgreSQL now: a file backup would be stale, so it is refused with what to use.
      const backup = await runIvoai(["server", "backup", "create", "--root", root]);
      expect(backup.code).toBe(2);
      expect(backup.stderr).toMatch(/in PostgreSQL.*pg_dump/);
    } finally {
      await database.drop();
      await cleanup();
    }
  });
});
