// An existing memory.sqlite carried into PostgreSQL by `ivoai server store migrate`: the copy is exact, and the
// store then runs on it, its generation and keys continuing where the file left them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createThrowawayDatabase,
  postgresAvailable,
  type ThrowawayDatabase,
} from "../../../test/postgres.js";
import { copyStore } from "../store/copy.js";
import { openPostgresSql } from "../store/postgres.js";
import { openSqliteSql } from "../store/sqlite.js";
import { preparePageWrite } from "./page-write.js";
import { MEMORY_MIGRATIONS } from "./schema.js";
import { createMemoryStore, openMemoryStore } from "./store.js";

const AT = "2026-01-01T00:00:00.000Z";
const page = (pagePath: string, body: string) =>
  preparePageWrite({ scope: "p", path: pagePath, body, author: "cli_a" });

describe("memory store copied from SQLite into PostgreSQL", async () => {
  const ready = await postgresAvailable();
  let dir = "";
  let database: ThrowawayDatabase | undefined;
  beforeAll(async () => {
    if (!ready) return;
    dir = mkdtempSync(path.join(tmpdir(), "ivoai-memory-copy-"));
    database = await createThrowawayDatabase();
  });
  afterAll(async () => {
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!ready)("copies every table, then writes on with larger keys and generations", async () => {
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
        meta: 2,
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
});
