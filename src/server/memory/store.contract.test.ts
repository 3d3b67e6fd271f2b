// The memory store's contract, run on SQLite and PostgreSQL: versions, the graph, feedback, episodes per
// credential and as of a time, keyset pagination, and the generation feed the in-memory index follows across
// connections. Last, what only an existing SQLite file can need: adopting the first release's schema.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeBackends } from "../store/backends.test-kit.js";
import type { SqlDatabase } from "../store/sql.js";
import { type PageInput, preparePageWrite } from "./page-write.js";
import { MEMORY_META_SCHEMA } from "./schema.js";
import {
  type ApprovalRecord,
  createMemoryStore,
  MAX_COUNTED_COMPLETIONS,
  MAX_NEIGHBOURS,
  type MemoryStore,
  openMemoryStore,
} from "./store.js";

const AS_OF = "2030-01-01T00:00:00.000Z";
const AT = "2026-01-01T00:00:00.000Z";

const page = (scope: string, pagePath: string, body: string, extra: Partial<PageInput> = {}) =>
  preparePageWrite({ scope, path: pagePath, body, author: "cli_a", ...extra });

const prepare = (record: ApprovalRecord) =>
  record.action === "write_page" ? preparePageWrite(record.payload as unknown as PageInput) : undefined;

describeBackends("memory store", (kit) => {
  let count = 0;
  const opened: { store: MemoryStore; db: SqlDatabase }[] = [];
  const open = async (schema = `memory_${++count}`) => {
    const db = await kit.open(schema);
    const store = await createMemoryStore(db);
    opened.push({ store, db });
    return store;
  };
  afterEach(async () => {
    for (const { store } of opened.splice(0)) await store.close();
  });

  it("keeps every version, newest first, deletions included; a rewrite gets a new key", async () => {
    const store = await open();
    const first = await store.writePage(
      page("p", "a", "# A\n\nfirst", { expires_at: "2026-06-01T00:00:00.000Z" }),
      AT,
    );
    expect(first).toMatchObject({
      scope: "p",
      path: "a",
      title: "A",
      version: 1,
      created_at: AT,
      updated_at: AT,
    });
    const second = await store.writePage(page("p", "a", "# A2\n\nsecond"), "2026-02-01T00:00:00.000Z");
    expect(second).toMatchObject({
      version: 2,
      title: "A2",
      created_at: AT,
      updated_at: "2026-02-01T00:00:00.000Z",
    });
    expect(second.key).toBeGreaterThan(first.key);
    expect(await store.pagesByKeys([first.key])).toEqual(new Map());
    expect((await store.pagesByKeys([second.key])).get(second.key)?.body).toBe("# A2\n\nsecond");
    await store.writePage(page("p", "b", "# B", { expires_at: "2026-03-01T00:00:00.000Z" }), AT);
    expect(await store.expirePages("2026-02-28T00:00:00.000Z")).toEqual([]);
    expect(await store.expirePages("2026-03-01T00:00:00.000Z")).toEqual([{ scope: "p", path: "b" }]);
    expect(await store.getPage("p", "b")).toBeUndefined();
    expect(await store.pageVersions("p", "b")).toEqual([
      { version: 2, title: "B", author: "system:expiry", at: "2026-03-01T00:00:00.000Z", deleted: true },
      { version: 1, title: "B", author: "cli_a", at: AT, deleted: false },
    ]);
    expect((await store.pageVersions("p", "a")).map((v) => [v.version, v.title, v.deleted])).toEqual([
      [2, "A2", false],
      [1, "A", false],
    ]);
    expect(await store.stats()).toEqual({
      pages: 1,
      versions: 4,
      edges: 0,
      episodes: 0,
      pending_approvals: 0,
    });
    expect((await store.recentPages(["p", "q"], 5)).map((p) => p.path)).toEqual(["a"]);
  });

  it("applies a batch of writes exactly as the same writes one at a time", async () => {
    const writes = [
      page("p", "a", "# A\n\nThe queue retries [[b]]."),
      page("p", "b", "# B\n\nParks a message after [[a]]."),
      page("_global", "a", "# Global A\n\nUma página em português sobre filas."),
      page("p", "a", "# A again\n\nA second version that links [[c]]."),
    ];
    const dump = async (db: SqlDatabase) => {
      const tables: unknown[] = [];
      for (const table of ["pages", "page_versions", "edges", "removed_pages"])
        tables.push(await db.all(`SELECT * FROM ${table} ORDER BY 1, 2`));
      // Each database has an identity of its own (its index snapshots are not another's).
      tables.push(await db.all("SELECT * FROM meta WHERE key <> 'instance' ORDER BY 1, 2"));
      return tables;
    };
    const one = await open();
    for (const write of writes) await one.writePage(write, AT);
    const batch = await open();
    await batch.writePages(writes, AT);
    const [oneDb, batchDb] = opened.map((entry) => entry.db) as [SqlDatabase, SqlDatabase];
    expect(await dump(batchDb)).toEqual(await dump(oneDb));
  });

  it(`follows at most ${MAX_NEIGHBOURS} links of an agent-written hub page, as heads without bodies`, async () => {
    const store = await open();
    const targets = Array.from({ length: MAX_NEIGHBOURS + 100 }, (_, index) => `t${index}`);
    await store.writePages(
      [
        page("p", "hub", `# Hub\n\n${targets.map((target) => `[[${target}]]`).join(" ")}`),
        ...targets.map((target) => page("p", target, `# ${target}\n\n${"x".repeat(2000)}`)),
      ],
      AT,
    );
    const links = await store.neighbours(["p"], ["hub"]);
    expect(links).toHaveLength(MAX_NEIGHBOURS);
    expect(links[0]?.page).not.toHaveProperty("body");
  });

  it("reads languages, scopes, page heads, neighbours, backlinks and edges both ways within the scopes", async () => {
    const store = await open();
    expect(await store.languages()).toEqual([]);
    expect(await store.pageScopes("", 10)).toEqual({ scopes: [], total: 0 });
    await store.writePages(
      [
        page("p", "a", "# A\n\nThe billing queue retries three times before it parks [[b]]."),
        page("p", "b", "# B\n\nA parked message waits for an operator, see [[a]]."),
        page("p", "c", "# C\n\nA fila de cobrança tenta três vezes antes de estacionar [[a]]."),
        page("q", "d", "# D\n\nAnother scope's page that links [[a]] too."),
      ],
      AT,
    );
    expect(await store.languages()).toEqual(["en", "pt"]);
    expect(await store.pageScopes("", 10)).toEqual({ scopes: ["p", "q"], total: 2 });
    expect(await store.pageScopes("", 1)).toEqual({ scopes: ["p"], total: 2 });
    const a = (await store.getPage("p", "a")) as NonNullable<Awaited<ReturnType<MemoryStore["getPage"]>>>;
    const heads = await store.pageHeads([a.key, 999]);
    expect([...heads.values()]).toEqual([
      { key: a.key, scope: "p", path: "a", feedback: { helpful: 0, not_helpful: 0, stale: 0, wrong: 0 } },
    ]);
    const links = await store.neighbours(["p"], ["a"]);
    expect(links.map((link) => [link.from, link.type, link.page.path]).sort()).toEqual([
      ["a", "links_to", "b"],
      ["a", "links_to", "b"],
      ["a", "links_to", "c"],
    ]);
    expect(await store.backlinks("p", "a")).toEqual([
      { from: "b", type: "links_to" },
      { from: "c", type: "links_to" },
    ]);
    // An edge between two of the paths matches both directions and is listed once.
    expect(await store.edgesAround(["p", "q"], ["a", "b"])).toEqual([
      { scope: "p", from: "a", type: "links_to", to: "b" },
      { scope: "p", from: "b", type: "links_to", to: "a" },
      { scope: "p", from: "c", type: "links_to", to: "a" },
      { scope: "q", from: "d", type: "links_to", to: "a" },
    ]);
    expect(await store.edgesAround(["p"], ["a", "b"], 2)).toHaveLength(2);
    expect(await store.pageTitles(["p"], ["a", "d", "zz"])).toEqual([{ scope: "p", path: "a", title: "A" }]);
  });

  it("counts approved feedback on the page; new content clears stale and wrong, keeps the votes", async () => {
    const store = await open();
    await store.writePage(page("p", "f", "# F"), AT);
    const feedback = (id: string, kind: string): ApprovalRecord => ({
      id,
      created_at: AT,
      expires_at: AS_OF,
      status: "pending",
      tool: "memory_feedback",
      action: "feedback",
      scope: "p",
      path: "f",
      requester: "cli_a",
      session_id: null,
      summary: kind,
      diff: "",
      payload: { kind },
      base_version: 1,
      decided_by: null,
      decided_at: null,
      reason: null,
    });
    for (const [id, kind] of [
      ["apr_h1", "helpful"],
      ["apr_h2", "helpful"],
      ["apr_s", "stale"],
      ["apr_w", "wrong"],
    ] as const) {
      await store.createApproval(feedback(id, kind));
      expect(
        (await store.decide({ id, approve: true, actor: "o", reason: null, at: AT }, prepare)).outcome,
      ).toBe("applied");
    }
    const before = await store.getPage("p", "f");
    expect(before?.feedback).toEqual({ helpful: 2, not_helpful: 0, stale: 1, wrong: 1 });
    expect(before?.version).toBe(1);
    const after = await store.writePage(page("p", "f", "# F2"), AT);
    expect(after.feedback).toEqual({ helpful: 2, not_helpful: 0, stale: 0, wrong: 0 });
  });

  it("shows an event only to the credential that recorded it, as of a time", async () => {
    const store = await open();
    const add = (
      credential_id: string,
      kind: string,
      recorded_at: string,
      valid?: [string | null, string | null],
    ) =>
      store.addEpisode({
        session_id: "s1",
        project: "p",
        kind,
        recorded_at,
        valid_from: valid?.[0] ?? null,
        valid_to: valid?.[1] ?? null,
        data: { kind },
        credential_id,
      });
    const first = await add("cli_alice", "tool_used", "2026-01-01T00:00:00.000Z");
    await add("cli_alice", "decision", "2026-01-02T00:00:00.000Z", [null, "2026-01-03T00:00:00.000Z"]);
    await add("cli_alice", "plan", "2026-01-02T00:00:00.000Z", ["2026-01-05T00:00:00.000Z", null]);
    await add("cli_bob", "tool_used", "2026-01-01T12:00:00.000Z");
    expect(first).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    const kinds = async (query: Partial<Parameters<MemoryStore["episodes"]>[0]>) =>
      (
        await store.episodes({
          credential_id: "cli_alice",
          as_of: AS_OF,
          limit: 10,
          session_id: "s1",
          ...query,
        })
      ).map((event) => event.kind);
    expect(await kinds({})).toEqual(["plan", "tool_used"]);
    expect(await kinds({ as_of: "2026-01-02T12:00:00.000Z" })).toEqual(["decision", "tool_used"]);
    expect(await kinds({ as_of: "2025-12-31T00:00:00.000Z" })).toEqual([]);
    expect(await kinds({ kinds: ["tool_used"], project: "p" })).toEqual(["tool_used"]);
    expect(await kinds({ project: "other" })).toEqual([]);
    expect(await kinds({ credential_id: "cli_bob" })).toEqual(["tool_used"]);
    expect((await store.getEpisode(first, "cli_alice"))?.data).toEqual({ kind: "tool_used" });
    expect(await store.getEpisode(first, "cli_bob")).toBeUndefined();
    const session = await store.sessionEpisodes({
      session_id: "s1",
      as_of: "2026-01-02T12:00:00.000Z",
      limit: 10,
    });
    expect(session.map((event) => [event.kind, event.credential_id])).toEqual([
      ["decision", "cli_alice"],
      ["tool_used", "cli_bob"],
      ["tool_used", "cli_alice"],
    ]);
  });

  it("lists pages newest first by keyset, filtered by scope and by title or path (wildcards literal)", async () => {
    const store = await open();
    const times = ["01", "02", "02", "03", "04"].map((s) => `2026-01-01T00:00:${s}.000Z`);
    for (const [index, at] of times.entries())
      await store.writePage(page(index === 4 ? "q" : "p", `notes/n${index}`, `# Note ${index}`), at);
    await store.writePage(page("p", "odd/percent", "# 100%_done"), "2026-01-01T00:00:00.000Z");
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const listed = await store.listPages({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...listed.pages.map((p) => `${p.scope}/${p.path}`));
      cursor = listed.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([
      "q/notes/n4",
      "p/notes/n3",
      "p/notes/n2",
      "p/notes/n1",
      "p/notes/n0",
      "p/odd/percent",
    ]);
    expect((await store.listPages({ scope: "q", limit: 10 })).pages.map((p) => p.path)).toEqual(["notes/n4"]);
    expect((await store.listPages({ q: "NOTE 3", limit: 10 })).pages.map((p) => p.path)).toEqual([
      "notes/n3",
    ]);
    expect((await store.listPages({ q: "0%_", limit: 10 })).pages.map((p) => p.path)).toEqual([
      "odd/percent",
    ]);
    expect((await store.listPages({ q: "n_", limit: 10 })).pages).toEqual([]);
    await expect(store.listPages({ limit: 2, cursor: "garbage" })).rejects.toMatchObject({ code: "USAGE" });
  });

  it("completes scopes and a scope's page paths by prefix, bytewise, with how many match", async () => {
    const store = await open();
    await store.writePages(
      [
        page("git:acme/api", "runbooks/deploy", "# Deploy"),
        page("git:acme/api", "runbooks/deploy-billing", "# Billing"),
        page("git:acme/api", "Runbooks/old", "# Old"),
        page("git:acme/web", "notes", "# Notes"),
        page("_global", "runbooks/policy", "# Policy"),
        page("git:acme/api", "runbooks_x", "# Underscore"),
      ],
      AT,
    );
    expect(await store.pageScopes("", 10)).toEqual({
      scopes: ["_global", "git:acme/api", "git:acme/web"],
      total: 3,
    });
    expect(await store.pageScopes("git:acme/", 1)).toEqual({ scopes: ["git:acme/api"], total: 2 });
    expect(await store.pageScopes("GIT", 10)).toEqual({ scopes: [], total: 0 });
    expect(await store.pagePaths("git:acme/api", "runbooks/", 10)).toEqual({
      paths: ["runbooks/deploy", "runbooks/deploy-billing"],
      total: 2,
    });
    // Upper case sorts first; a LIKE wildcard is a plain character.
    expect(await store.pagePaths("git:acme/api", "", 10)).toEqual({
      paths: ["Runbooks/old", "runbooks/deploy", "runbooks/deploy-billing", "runbooks_x"],
      total: 4,
    });
    expect(await store.pagePaths("git:acme/api", "runbooks_", 10)).toEqual({
      paths: ["runbooks_x"],
      total: 1,
    });
    expect(await store.pagePaths("git:acme/api", "runbooks%", 10)).toEqual({ paths: [], total: 0 });
    expect(await store.pagePaths("nope", "", 10)).toEqual({ paths: [], total: 0 });
  });

  it("counts completion matches only up to its cap, so a keystroke never counts every page", async () => {
    const store = await open();
    const many = Array.from({ length: MAX_COUNTED_COMPLETIONS + 5 }, (_, index) => index);
    await store.writePages(
      many.flatMap((index) => [page(`s${index}`, "p", "# P"), page("one", `p${index}`, "# P")]),
      AT,
    );
    expect(await store.pageScopes("", 2)).toEqual({ scopes: ["one", "s0"], total: MAX_COUNTED_COMPLETIONS });
    expect(await store.pageScopes("s100", 100)).toMatchObject({ total: 6 });
    expect(await store.pagePaths("one", "", 2)).toEqual({
      paths: ["p0", "p1"],
      total: MAX_COUNTED_COMPLETIONS,
    });
    expect(await store.pagePaths("one", "p100", 100)).toMatchObject({ total: 6 });
  });

  it("feeds the index across connections: generation, keys in order, and removals since a generation", async () => {
    const schema = `memory_${++count}`;
    const writer = await open(schema);
    const reader = await open(schema);
    const start = await reader.generation();
    const a = await writer.writePage(page("p", "a", "# A\n\nqueue"), AT);
    const b = await writer.writePage(page("q", "b", "# B\n\nretry"), AT);
    expect(await reader.generation()).toBe(start + 2);
    expect(await reader.pageTermsAfter(0, 10)).toEqual([
      { key: a.key, terms: expect.any(String), scope: "p" },
      { key: b.key, terms: expect.any(String), scope: "q" },
    ]);
    expect(await reader.pageTermsAfter(a.key, 10)).toHaveLength(1);
    expect(await reader.removedSince(start)).toEqual([]);
    const seen = await reader.generation();
    const a2 = await writer.writePage(page("p", "a", "# A\n\nqueue again"), AT);
    expect(await reader.removedSince(seen)).toEqual([a.key]);
    expect((await reader.pageTermsAfter(b.key, 10)).map((row) => row.key)).toEqual([a2.key]);
    expect(await reader.generation()).toBe(seen + 1);
  });

  it("refuses a database migrated by a newer ivoai", async () => {
    const schema = `memory_${++count}`;
    const store = await open(schema);
    const db = opened.at(-1)?.db as SqlDatabase;
    await db.run(
      "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('memory', 99, 'x', $1)",
      [AT],
    );
    await expect(createMemoryStore(await kit.open(schema)).then((s) => s.close())).rejects.toMatchObject({
      code: "STORE_VERSION",
    });
    expect(await store.generation()).toBe(0);
  });
});

// The episodes table and meta row exactly as the first release created them.
const SCHEMA_1 = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta (key, value) VALUES ('schema', '1'), ('generation', '0');
CREATE TABLE episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, project TEXT NOT NULL, kind TEXT NOT NULL,
  recorded_at TEXT NOT NULL, valid_from TEXT, valid_to TEXT, data TEXT NOT NULL, credential_id TEXT NOT NULL
);
INSERT INTO episodes (session_id, project, kind, recorded_at, data, credential_id)
  VALUES ('s1', 'p', 'tool_used', '2026-01-01T00:00:00.000Z', '{"old":1}', 'cli_alice'),
         ('s1', 'p', 'session_end', '2026-01-01T00:00:01.000Z', '{"old":2}', 'cli_alice');
`;

describe("memory store on an existing SQLite file", () => {
  let dir: string;
  let store: MemoryStore | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-memory-"));
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it("migrates a schema-1 database: old events get random ids and stay with their credential", async () => {
    const file = path.join(dir, "memory.sqlite");
    const old = new Database(file);
    old.exec(SCHEMA_1);
    old.close();

    store = await openMemoryStore(file);
    const mine = await store.episodes({
      credential_id: "cli_alice",
      session_id: "s1",
      as_of: AS_OF,
      limit: 10,
    });
    expect(mine.map((event) => event.kind)).toEqual(["session_end", "tool_used"]);
    for (const event of mine) expect(event.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(await store.episodes({ credential_id: "cli_bob", project: "p", as_of: AS_OF, limit: 10 })).toEqual(
      [],
    );
    const first = mine[1]?.id as string;
    expect((await store.getEpisode(first, "cli_alice"))?.data).toEqual({ old: 1 });
    expect(await store.getEpisode(first, "cli_bob")).toBeUndefined();

    // New events come after old ones, and reopening keeps every id.
    const fresh = await store.addEpisode({
      session_id: "s1",
      project: "p",
      kind: "prompt_submitted",
      recorded_at: "2026-01-01T00:00:01.000Z",
      valid_from: null,
      valid_to: null,
      data: {},
      credential_id: "cli_alice",
    });
    await store.close();
    store = await openMemoryStore(file);
    const again = await store.episodes({
      credential_id: "cli_alice",
      session_id: "s1",
      as_of: AS_OF,
      limit: 10,
    });
    expect(again.map((event) => event.id)).toEqual([fresh, ...mine.map((event) => event.id)]);
    const meta = new Database(file, { readonly: true });
    expect(meta.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({
      value: String(MEMORY_META_SCHEMA),
    });
    expect(meta.prepare("SELECT store, version FROM schema_migrations").all()).toEqual([
      { store: "memory", version: 1 },
      { store: "memory", version: 2 },
    ]);
    meta.close();
  });
});
