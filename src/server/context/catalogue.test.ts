// The SQLite catalogue on a real file: older files are adopted in place (a catalogue made before ingest summaries
// were kept gains the column; one the previous release made keeps its documents and joins schema_migrations),
// each connector keeps the summary of its latest run, and a file a newer ivoai migrated is refused.
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { type DocumentRecord, openSqliteCatalogue } from "./catalogue.js";

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
      await catalogue.close();
    }
    // Opening again (the column exists now) changes nothing.
    const again = openSqliteCatalogue(file);
    expect((await again.listConnectors())[0]?.last_ingest?.at).toBe("2026-01-03T00:00:00.000Z");
    await again.close();
  });

  it("refuses a catalogue a newer ivoai wrote, and leaves it as it was", async () => {
    const file = `${dir}/catalogue.sqlite`;
    await openSqliteCatalogue(file).close();
    const newer = new Database(file);
    newer
      .prepare(
        "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('context', 5, 'x', '')",
      )
      .run();
    newer.close();
    const refused = openSqliteCatalogue(file);
    await expect(refused.ready).rejects.toThrow(/schema version 5, but this ivoai knows versions up to 4/);
    await expect(refused.stats()).rejects.toThrow(/schema version 5/);
    await refused.close();
    const after = new Database(file, { readonly: true });
    expect(
      after.prepare("SELECT MAX(version) AS v FROM schema_migrations WHERE store = 'context'").get(),
    ).toEqual({ v: 5 });
    after.close();
  });

  it.each([
    ["as its server left it", ""],
    // `store migrate --to postgres` ran the no-op SQLite side of versions 1-3 on it (before checksums).
    [
      "after a copy to PostgreSQL",
      `CREATE TABLE schema_migrations (store TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
         applied_at TEXT NOT NULL, PRIMARY KEY (store, version));
       INSERT INTO schema_migrations VALUES ('context', 1, 'catalogue', ''), ('context', 2, 'chunk vectors', ''),
         ('context', 3, 'documents in path order', '');`,
    ],
  ])(
    "opens a catalogue the previous release made (%s) in place, with its documents, generation and instance",
    async (_, copied) => {
      const file = `${dir}/catalogue.sqlite`;
      const old = new Database(file);
      old.pragma("journal_mode = WAL");
      // The previous release's schema, as its open left it (source_stat and last_ingest added by ALTER).
      old.exec(`${PREVIOUS_RELEASE_SCHEMA}
      ALTER TABLE documents ADD COLUMN source_stat TEXT;
      ALTER TABLE connectors ADD COLUMN last_ingest TEXT;
      UPDATE meta SET value = '7' WHERE key = 'generation';
      UPDATE meta SET value = '0123456789abcdef0123456789abcdef' WHERE key = 'instance';
      INSERT INTO connectors (name, type, path, created_at) VALUES ('docs', 'filesystem', '/srv/docs', '2026-01-01T00:00:00.000Z');
      INSERT INTO documents (id, connector, rel_path, title, language, fingerprint, bytes, modified_at, ingested_at, metadata, source_stat)
        VALUES ('d1', 'docs', 'a.md', 'A', 'en', 'p1:x', 11, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '{"extension":"md"}', '1:2:3');
      INSERT INTO chunks (doc, id, idx, unit_start, text, terms) VALUES (1, 'c0', 0, 0, 'Hello ', 'hello'), (1, 'c1', 1, 6, 'world', 'world');
      ${copied}`);
      old.close();

      const catalogue = openSqliteCatalogue(file);
      try {
        await catalogue.ready;
        expect(await catalogue.getDocument("d1")).toMatchObject({ rel_path: "a.md", body: "Hello world" });
        expect((await catalogue.documentStates("docs")).get("d1")).toEqual({
          fingerprint: "p1:x",
          sourceStat: "1:2:3",
        });
        expect(await catalogue.generation()).toBe(7);
        expect(await catalogue.instance()).toBe("0123456789abcdef0123456789abcdef");
        expect(await catalogue.stats()).toEqual({ connectors: 1, documents: 1, chunks: 2, bytes: 11 });
        // It takes writes as before: seqs go on after the old ones, the old chunks are tombstoned.
        await catalogue.replaceDocuments([
          {
            document: {
              ...(await catalogue.documentsByIds(["d1"])).get("d1"),
              fingerprint: "p1:y",
            } as DocumentRecord,
            chunks: [{ id: "c2", index: 0, unitStart: 0, text: "Bye", terms: "bye" }],
          },
        ]);
        expect((await catalogue.chunkTermsAfter(2, 10)).map((row) => [row.seq, row.terms])).toEqual([
          [3, "bye"],
        ]);
        expect((await catalogue.removedSince(7)).sort()).toEqual([1, 2]);
      } finally {
        await catalogue.close();
      }
      const check = new Database(file, { readonly: true });
      expect(
        check
          .prepare("SELECT version, name FROM schema_migrations WHERE store = 'context' ORDER BY version")
          .all(),
      ).toEqual([
        { version: 1, name: "catalogue" },
        { version: 2, name: "chunk vectors" },
        { version: 3, name: "documents in path order" },
        { version: 4, name: "catalogue on sqlite" },
      ]);
      check.close();
    },
  );
});

/** The catalogue schema of the release before the catalogue used schema_migrations (its open ran this). */
const PREVIOUS_RELEASE_SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', '1'), ('generation', '0');
INSERT OR IGNORE INTO meta (key, value) VALUES ('instance', lower(hex(randomblob(16))));
CREATE TABLE IF NOT EXISTS connectors (
  name TEXT PRIMARY KEY, type TEXT NOT NULL, path TEXT NOT NULL, created_at TEXT NOT NULL, last_ingest_at TEXT,
  allow_hardlinks INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS documents (
  key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, connector TEXT NOT NULL, rel_path TEXT NOT NULL,
  title TEXT NOT NULL, language TEXT NOT NULL, fingerprint TEXT NOT NULL, bytes INTEGER NOT NULL,
  modified_at TEXT NOT NULL, ingested_at TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (connector, rel_path)
);
CREATE INDEX IF NOT EXISTS documents_ingested ON documents (ingested_at);
CREATE TABLE IF NOT EXISTS chunks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, doc INTEGER NOT NULL, id TEXT NOT NULL,
  idx INTEGER NOT NULL, unit_start INTEGER NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc);
CREATE TABLE IF NOT EXISTS removed_chunks (seq INTEGER PRIMARY KEY, generation INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS removed_chunks_generation ON removed_chunks (generation);
`;
