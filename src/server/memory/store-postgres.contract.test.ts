// What only PostgreSQL does: an existing memory.sqlite carried over by `ivoai server store migrate` (the copy is
// exact, and the store runs on with its generation and keys continuing), and the change notifications that wake
// other replicas' indexes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/postgres.js";
import { copyStore } from "../store/copy.js";
import { listenForChanges, openPostgresSql } from "../store/postgres.js";
import { openSqliteSql } from "../store/sqlite.js";
import { MEMORY_CHANGED } from "./page-store.js";
import { preparePageWrite } from "./page-write.js";
import { MEMORY_MIGRATIONS } from "./schema.js";
import { createMemoryStore, openMemoryStore } from "./store.js";

const AT = "2026-01-01T00:00:00.000Z";
const page = (pagePath: string, body: string) =>
  preparePageWrite({ scope: "p", path: pagePath, body, author: "cli_a" });

describe("memory store on PostgreSQL", async () => {
  let dir = "";
  let database: ThrowawayDatabase | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "ivoai-memory-copy-"));
    database = await createThrowawayDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("copies every table, then writes on with larger keys and generations", async () => {
    const file = path.join(dir, "memory.sqlite");
    const sqlite = await openMemoryStore(file);
    await sqlite.writePages([page("a", "# A\n\n[[b]]"), page("b", "# B"), page("a", "# A2\n\n[[b]]")], AT);
    await sqlite.addEpisode({
      session_id: "s",
      project: "p",
      kind: "note",
      recorded_at: AT,
      valid_from: null,
      valid_to: null,
      data: { n: 1 },
      credential_id: "cli_a",
    });
    const generation = await sqlite.generation();
    const lastKey = (await sqlite.getPage("p", "a"))?.key ?? 0;
    await sqlite.close();

    const source = openSqliteSql(file);
    const target = await openPostgresSql({ url: database?.url ?? "", schema: "ivoai_memory" });
    try {
      const tables = await copyStore("memory", MEMORY_MIGRATIONS, source, target);
      expect(Object.fromEntries(tables.map((table) => [table.table, table.rows]))).toMatchObject({
        pages: 2,
        page_versions: 3,
        edges: 1,
        removed_pages: 1,
        episodes: 1,
        meta: 3,
        approvals: 0,
      });
      const store = await createMemoryStore(target);
      expect(await store.generation()).toBe(generation);
      expect((await store.getPage("p", "a"))?.body).toBe("# A2\n\n[[b]]");
      expect(await store.backlinks("p", "b")).toEqual([{ from: "a", type: "links_to" }]);
      const next = await store.writePage(page("c", "# C"), AT);
      expect(next.key).toBeGreaterThan(lastKey);
      expect(await store.generation()).toBe(generation + 1);
      expect(await store.episodes({ credential_id: "cli_a", as_of: AT, limit: 5 })).toHaveLength(1);
    } finally {
      await source.close();
      await target.close();
    }
  });

  it("notifies listeners once per committed page-writing transaction, never on rollback", async () => {
    const store = await createMemoryStore(
      await openPostgresSql({ url: database?.url ?? "", schema: "ivoai_memory_notify" }),
    );
    const signals: string[] = [];
    const waiters: (() => void)[] = [];
    const next = () => new Promise<void>((resolve) => waiters.push(resolve));
    let woken = next();
    const changes = await listenForChanges(database?.url ?? "", MEMORY_CHANGED, {
      onSignal: (reason) => {
        signals.push(reason);
        waiters.shift()?.();
      },
    });
    try {
      await woken;
      woken = next();
      // Three pages in one transaction: one notification, at commit.
      await store.writePages([page("a", "# A"), page("b", "# B"), page("c", "# C")], AT);
      await woken;
      woken = next();
      // A batch that fails half-way (a page without tags breaks NOT NULL) is rolled back and sends nothing.
      const bad = { ...page("d", "# D"), tags: undefined as unknown as string[] };
      await expect(store.writePages([page("e", "# E"), bad], AT)).rejects.toThrow();
      expect(await store.getPage("p", "e")).toBeUndefined();
      await store.writePage(page("f", "# F"), AT);
      await woken;
      // Notifications arrive in commit order: the rolled-back batch would have come before the last write's.
      expect(signals).toEqual(["connected", "notification", "notification"]);
    } finally {
      await changes.close();
      await store.close();
    }
  });
});
