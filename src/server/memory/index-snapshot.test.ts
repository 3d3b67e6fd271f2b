// The memory index's snapshot over a real SQLite store: a restarted index loads it instead of reading every page,
// keeps each scope's confinement and each session's window, and numbers a new scope apart from the restored ones.
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { readIndexSnapshot, writeIndexSnapshot } from "../retrieval/index-snapshot.js";
import { preparePageWrite } from "./page-write.js";
import { createMemoryIndex, createMemorySearcher } from "./query.js";
import { type MemoryStore, openMemoryStore } from "./store.js";

const AT = "2026-06-10T09:00:00Z";

describe("memory index snapshot", () => {
  let cleanup: () => Promise<void>;
  let dir: string;
  let store: MemoryStore;
  const snapshotFile = () => path.join(dir, "page-index.snapshot");
  /** The store, counting the page rows the index reads from it. */
  const counted = () => {
    const reads = { rows: 0 };
    const wrapped: MemoryStore = {
      ...store,
      async pageTermsAfter(afterKey, limit) {
        const rows = await store.pageTermsAfter(afterKey, limit);
        reads.rows += rows.length;
        return rows;
      },
    };
    return { wrapped, reads };
  };
  const problems: string[] = [];
  const indexOver = (over: MemoryStore) =>
    createMemoryIndex(over, { snapshotFile: snapshotFile(), onSnapshotProblem: (m) => problems.push(m) });
  const ranked = async (
    over: MemoryStore,
    index: ReturnType<typeof createMemoryIndex>,
    query: string,
    scope: string,
  ) => (await createMemorySearcher(over, index).search(query, [scope], 10)).map((hit) => hit.page.path);

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    store = await openMemoryStore(path.join(dir, "memory.sqlite"));
    problems.length = 0;
    const turn = (scope: string, n: number, speaker: string, text: string) =>
      preparePageWrite({
        scope,
        path: `scene/u${n}`,
        body: `---\nspeaker: ${speaker}\nsession: scene-1\n---\n${text}\n`,
        author: "agent",
      });
    // Interleaved, so that rows of one scope and session are far apart (their metadata one object all the same).
    const others = Array.from({ length: 50 }, (_, i) =>
      preparePageWrite({
        scope: "team:b",
        path: `n/${i}`,
        body: "pangolin pangolin deploy keys",
        author: "agent",
      }),
    );
    await store.writePages(
      [
        turn("team:a", 0, "Ana", "Where did we put the pangolin deploy keys?"),
        ...others.slice(0, 20),
        turn("team:a", 1, "Bruno", "In the vault, under ops."),
        ...others.slice(20, 40),
        turn("team:a", 2, "Ana", "Thanks, and the rota?"),
        ...others.slice(40),
      ],
      AT,
    );
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("restores instead of reading every page, with the same rankings, scopes and session windows", async () => {
    const first = counted();
    const built = indexOver(first.wrapped);
    const before = {
      a: await ranked(first.wrapped, built, "pangolin keys", "team:a"),
      b: await ranked(first.wrapped, built, "pangolin keys", "team:b"),
    };
    expect(first.reads.rows).toBe(53);
    // The turn that answers has no query term: its session's window brings it.
    expect(before.a[0]).toBe("scene/u0");
    expect(before.a).toContain("scene/u1");
    await built.persist();
    expect((await stat(snapshotFile())).size).toBeGreaterThan(0);

    const second = counted();
    const restored = indexOver(second.wrapped);
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:a")).toEqual(before.a);
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:b")).toEqual(before.b);
    expect(second.reads.rows).toBe(0);
    expect(problems).toEqual([]);

    // A scope first seen after the restore is confined apart from every restored one.
    await store.writePage(
      preparePageWrite({ scope: "team:c", path: "only", body: "pangolin keys for c", author: "agent" }),
      AT,
    );
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:c")).toEqual(["only"]);
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:a")).toEqual(before.a);
    expect(second.reads.rows).toBe(1);
  });

  it("refuses a well-checksummed snapshot whose metadata is not a page's, and rebuilds from the store", async () => {
    const built = indexOver(store);
    const before = await ranked(store, built, "pangolin keys", "team:a");
    await built.persist();
    const read = await readIndexSnapshot(snapshotFile());
    if (!read.ok) throw new Error(read.detail);
    // Written again by the real writer (a valid checksum) with hostile metadata: a group that is no number, a
    // scope that is an object.
    const hostile = read.snapshot.metas.map((meta, i) =>
      i === 0 ? { ...(meta as object), group: "0; DROP" } : { ...(meta as object), scope: { $ne: 1 } },
    );
    await writeIndexSnapshot(snapshotFile(), { ...read.snapshot, metas: hostile });
    const second = counted();
    const restored = indexOver(second.wrapped);
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:a")).toEqual(before);
    expect(await ranked(second.wrapped, restored, "pangolin keys", "team:b")).not.toContain("scene/u0");
    expect(second.reads.rows).toBe(53);
    expect(problems).toEqual(["index snapshot not used (corrupt: metadata of another shape)"]);
  });

  it("is not used for another database, and the index is rebuilt from the store", async () => {
    const built = indexOver(store);
    await built.refresh();
    await built.persist();
    const other = await openMemoryStore(path.join(dir, "other.sqlite"));
    try {
      await other.writePage(
        preparePageWrite({ scope: "team:a", path: "x", body: "pangolin elsewhere", author: "agent" }),
        AT,
      );
      const index = indexOver(other);
      expect(await ranked(other, index, "pangolin", "team:a")).toEqual(["x"]);
      expect(problems.join("\n")).toContain("another catalogue");
    } finally {
      await other.close();
    }
  });
});
