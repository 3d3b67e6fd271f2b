// The catalogue's connector registry on a real SQLite file: a catalogue made before ingest summaries were kept
// gains the column, and each connector keeps the summary of its latest run.
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { openSqliteCatalogue } from "./catalogue.js";

describe("catalogue ingest summaries", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(() => cleanup());

  it("migrates an older catalogue and keeps the latest summary per connector", async () => {
    const file = `${dir}/catalogue.sqlite`;
    const old = new Database(file);
    old.exec(`CREATE TABLE connectors (name TEXT PRIMARY KEY, type TEXT NOT NULL, path TEXT NOT NULL,
      created_at TEXT NOT NULL, last_ingest_at TEXT, allow_hardlinks INTEGER NOT NULL DEFAULT 0);
      INSERT INTO connectors VALUES ('docs', 'filesystem', '/srv/docs', '2026-01-01T00:00:00.000Z', NULL, 0);`);
    old.close();

    const catalogue = openSqliteCatalogue(file);
    try {
      expect((await catalogue.listConnectors()).map((c) => [c.name, c.last_ingest])).toEqual([
        ["docs", null],
      ]);
      const summary = {
        at: "2026-01-02T00:00:00.000Z",
        added: 3,
        updated: 1,
        unchanged: 0,
        removed: 0,
        skipped: 2,
        skipped_by_reason: { symlink: 2 },
        skipped_examples: [{ path: "a", reason: "symlink" }],
        complete: false,
        error: "EIO",
      };
      await catalogue.recordIngestSummary("docs", summary);
      await catalogue.recordIngestSummary("docs", {
        ...summary,
        at: "2026-01-03T00:00:00.000Z",
        complete: true,
      });
      const [docs] = await catalogue.listConnectors();
      expect(docs?.last_ingest).toEqual({ ...summary, at: "2026-01-03T00:00:00.000Z", complete: true });
      expect((await catalogue.getConnector("docs"))?.last_ingest?.added).toBe(3);
    } finally {
      catalogue.close();
    }
    // Opening again (the column exists now) changes nothing.
    const again = openSqliteCatalogue(file);
    expect((await again.listConnectors())[0]?.last_ingest?.at).toBe("2026-01-03T00:00:00.000Z");
    again.close();
  });

  it("refuses a catalogue a newer ivoai wrote, and leaves it as it was", async () => {
    const file = `${dir}/catalogue.sqlite`;
    openSqliteCatalogue(file).close();
    const newer = new Database(file);
    newer.prepare("UPDATE meta SET value = '2' WHERE key = 'schema'").run();
    newer.close();
    expect(() => openSqliteCatalogue(file)).toThrow(
      /schema version 2, but this ivoai knows versions up to 1/,
    );
    const after = new Database(file, { readonly: true });
    expect(after.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({ value: "2" });
    after.close();
  });
});
