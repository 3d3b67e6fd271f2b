import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type MemoryStore, openMemoryStore, type PageWrite } from "../memory/store.js";
import { mergeMemory } from "./merge.js";

const page = (p: string, body: string, edges: [string, string][] = []): PageWrite => ({
  scope: "_global",
  path: p,
  title: p,
  tags: [],
  relations: {},
  expires_at: null,
  body,
  author: "test",
  terms: body.toLowerCase(),
  language: "en",
  edges,
});

describe("memory merge on restore", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-merge-"));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const open = (name: string): Promise<MemoryStore> => openMemoryStore(path.join(dir, name));

  it("adds what the target lacks and keeps what it has, including a page deleted since", async () => {
    const backup = await open("backup.sqlite");
    await backup.writePage(page("shared", "backup v1"), "2026-01-01T00:00:00Z");
    await backup.writePage(page("shared", "backup v2"), "2026-01-02T00:00:00Z");
    await backup.writePage(
      page("only-backup", "from the backup", [["links", "shared"]]),
      "2026-01-03T00:00:00Z",
    );
    await backup.writePage(page("gone", "deleted later in the target"), "2026-01-03T00:00:00Z");
    await backup.close();

    const target = await open("target.sqlite");
    await target.writePage(page("shared", "target v1"), "2026-02-01T00:00:00Z");
    await target.writePage(page("only-target", "kept"), "2026-02-01T00:00:00Z");
    await target.writePage(
      { ...page("gone", "deleted later in the target"), expires_at: "2026-01-04T00:00:00Z" },
      "2026-01-03T00:00:00Z",
    );
    expect(await target.expirePages("2026-03-01T00:00:00Z")).toEqual([{ scope: "_global", path: "gone" }]);
    await target.close();

    const added = mergeMemory(path.join(dir, "target.sqlite"), path.join(dir, "backup.sqlite"));
    expect(added).toMatchObject({ pages: 1, edges: 1 });

    const merged = await open("target.sqlite");
    try {
      expect((await merged.getPage("_global", "shared"))?.body).toBe("target v1");
      expect((await merged.getPage("_global", "only-target"))?.body).toBe("kept");
      expect((await merged.getPage("_global", "only-backup"))?.body).toBe("from the backup");
      expect(await merged.getPage("_global", "gone")).toBeUndefined();
      expect(await merged.backlinks("_global", "shared")).toEqual([{ from: "only-backup", type: "links" }]);
      // The target's version 1 of "shared" wins; the backup's version 2 joins the history.
      expect(await merged.stats()).toMatchObject({ pages: 3, versions: 6 });
    } finally {
      await merged.close();
    }
  });
});
