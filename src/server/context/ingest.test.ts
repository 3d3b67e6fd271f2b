// An ingest that stops part-way (here: preparation fails on one file) leaves only whole documents behind, and the
// next run completes it: what was committed is found unchanged, the rest is added, nothing is removed early. A
// failure must not surface as an unhandled rejection while earlier files are still being committed.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { openSqliteCatalogue } from "./catalogue.js";
import { createConnector } from "./connectors/index.js";
import { ingestConnector } from "./ingest.js";
import { createInlinePreparer, type DocumentPreparer } from "./prepare-pool.js";

describe("ingest interrupted part-way", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
  });
  afterEach(() => cleanup());

  it("commits whole documents only, and the next run completes the catalogue", async () => {
    const source = path.join(dir, "docs");
    await mkdir(source);
    for (let i = 0; i < 9; i++)
      await writeFile(path.join(source, `d${i}.md`), `# Doc ${i}\n\n${"pelican harbour ".repeat(200 + i)}`);
    const file = path.join(dir, "catalogue.sqlite");
    const catalogue = openSqliteCatalogue(file);
    const connector = createConnector("filesystem", "docs", source);
    await catalogue.addConnector({
      name: "docs",
      type: "filesystem",
      path: source,
      created_at: new Date().toISOString(),
      last_ingest_at: null,
      last_ingest: null,
      allow_hardlinks: false,
    });
    try {
      // Preparation of the sixth file fails, as a crashed worker would.
      const inline = createInlinePreparer();
      let jobs = 0;
      const failing: DocumentPreparer = {
        prepare: (job) => (++jobs === 6 ? Promise.reject(new Error("worker died")) : inline.prepare(job)),
        close: async () => {},
      };
      const first = await ingestConnector(connector, { catalogue, preparer: failing, batchSize: 2 });
      expect(first).toMatchObject({ complete: false, error: "worker died", added: 5, removed: 0 });
      // Each batch commits whole, the last one (d4) when the run stops; d5 on are not there at all.
      const rows = () => {
        const db = new Database(file, { readonly: true });
        try {
          return db
            .prepare(
              "SELECT d.rel_path, COUNT(c.seq) AS chunks, MAX(c.idx) + 1 AS expected FROM documents d LEFT JOIN chunks c ON c.doc = d.key GROUP BY d.key ORDER BY d.rel_path",
            )
            .all() as { rel_path: string; chunks: number; expected: number }[];
        } finally {
          db.close();
        }
      };
      expect(rows().map((row) => row.rel_path)).toEqual(["d0.md", "d1.md", "d2.md", "d3.md", "d4.md"]);
      for (const row of rows()) expect(row.chunks).toBe(row.expected);

      const second = await ingestConnector(connector, { catalogue, batchSize: 2 });
      expect(second).toMatchObject({ complete: true, added: 4, unchanged: 5, updated: 0, removed: 0 });
      expect(rows().map((row) => row.rel_path)).toEqual(Array.from({ length: 9 }, (_, i) => `d${i}.md`));
    } finally {
      await catalogue.close();
    }
  });
});
