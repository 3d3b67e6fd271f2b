// The catalogue contract, asserted once and run on both backends: the SQLite catalogue (the embedded default) and
// the PostgreSQL one that gateway replicas share.
import { expect, it } from "vitest";
import { describeBackends } from "../store/backends.test-kit.js";
import {
  type Catalogue,
  type DocumentReplacement,
  MAX_COUNTED_COMPLETIONS,
  openSqliteCatalogue,
} from "./catalogue.js";
import { openPostgresCatalogue } from "./catalogue-postgres.js";

function doc(id: string, text: string[], at = "2026-01-01T00:00:00.000Z"): DocumentReplacement {
  let offset = 0;
  return {
    document: {
      id,
      connector: "docs",
      rel_path: `${id}.md`,
      title: `Title ${id}`,
      language: id.startsWith("pt") ? "pt" : "en",
      fingerprint: `p1:${id}:${text.join("|").length}`,
      bytes: text.join("").length,
      modified_at: at,
      ingested_at: at,
      metadata: { extension: "md" },
    },
    chunks: text.map((piece, index) => {
      const chunk = {
        id: `${id}-c${index}`.padEnd(32, "0"),
        index,
        unitStart: offset,
        text: piece,
        terms: `t${index} ${id}`,
      };
      offset += piece.length;
      return chunk;
    }),
  };
}

describeBackends("context catalogue", (kit) => {
  const open = async (): Promise<Catalogue> =>
    kit.dialect === "sqlite"
      ? openSqliteCatalogue((kit.sqliteFile as (name: string) => string)("catalogue"))
      : openPostgresCatalogue(await kit.open("ivoai_context"));

  it("keeps connectors in name order with their ingest summaries", async () => {
    const catalogue = await open();
    try {
      for (const name of ["zeta", "docs", "Alpha"])
        await catalogue.addConnector({
          name,
          type: "filesystem",
          path: `/srv/${name}`,
          created_at: "2026-01-01T00:00:00.000Z",
          last_ingest_at: null,
          allow_hardlinks: name === "docs",
          last_ingest: null,
        });
      expect((await catalogue.listConnectors()).map((c) => c.name)).toEqual(["Alpha", "docs", "zeta"]);
      await catalogue.markIngested("docs", "2026-01-02T00:00:00.000Z");
      const summary = {
        at: "2026-01-02T00:00:00.000Z",
        added: 3,
        updated: 1,
        unchanged: 0,
        removed: 0,
        skipped: 0,
        skipped_by_reason: {},
        skipped_examples: [],
        complete: true,
      };
      await catalogue.recordIngestSummary("docs", summary);
      expect(await catalogue.getConnector("docs")).toMatchObject({
        allow_hardlinks: true,
        last_ingest_at: "2026-01-02T00:00:00.000Z",
        last_ingest: summary,
      });
      await catalogue.deleteConnector("zeta");
      expect(await catalogue.getConnector("zeta")).toBeUndefined();
    } finally {
      await catalogue.close();
    }
  });

  it("replaces documents whole: bodies rebuilt, old chunks tombstoned, a new generation per write", async () => {
    const catalogue = await open();
    try {
      const g0 = await catalogue.generation();
      await catalogue.replaceDocuments([doc("a", ["Hello ", "world"]), doc("pt-b", ["Olá ", "mundo", "!"])]);
      const g1 = await catalogue.generation();
      expect(g1).toBe(g0 + 1);
      const added = await catalogue.chunkTermsAfter(0, 100);
      expect(added.map((row) => [row.terms, row.document_id, row.connector])).toEqual([
        ["t0 a", "a", "docs"],
        ["t1 a", "a", "docs"],
        ["t0 pt-b", "pt-b", "docs"],
        ["t1 pt-b", "pt-b", "docs"],
        ["t2 pt-b", "pt-b", "docs"],
      ]);
      expect(added.map((row) => row.seq)).toEqual([...added.map((row) => row.seq)].sort((x, y) => x - y));
      expect((await catalogue.getDocument("pt-b"))?.body).toBe("Olá mundo!");
      expect((await catalogue.getDocument("a"))?.metadata).toEqual({ extension: "md" });
      expect((await catalogue.languages()).sort()).toEqual(["en", "pt"]);

      await catalogue.replaceDocuments([doc("a", ["Hello again"], "2026-02-01T00:00:00.000Z")]);
      const removed = await catalogue.removedSince(g1);
      expect(removed.sort((x, y) => x - y)).toEqual(added.slice(0, 2).map((row) => row.seq));
      const last = added.at(-1)?.seq ?? 0;
      const readded = await catalogue.chunkTermsAfter(last, 10);
      expect(readded.map((row) => row.terms)).toEqual(["t0 a"]);
      const bySeq = await catalogue.chunksBySeq([readded[0]?.seq ?? 0, added[2]?.seq ?? 0, 999_999]);
      expect([...bySeq.values()].map((row) => [row.document_id, row.idx, row.text]).sort()).toEqual([
        ["a", 0, "Hello again"],
        ["pt-b", 0, "Olá "],
      ]);
      expect((await catalogue.recentDocuments(10)).map((d) => d.id)).toEqual(["a", "pt-b"]);
      expect((await catalogue.recentDocuments(10, "other")).length).toBe(0);
      expect([...(await catalogue.documentsByIds(["pt-b", "nope"])).keys()]).toEqual(["pt-b"]);
      expect(await catalogue.stats()).toEqual({ connectors: 2, documents: 2, chunks: 4, bytes: 21 });
      expect(await catalogue.chunkCount()).toBe(4);
      expect((await catalogue.chunkTextsAfter(0, 10)).length).toBe(4);

      const g2 = await catalogue.generation();
      expect(await catalogue.removeDocuments(["pt-b", "missing"])).toBe(1);
      expect((await catalogue.removedSince(g2)).length).toBe(3);
      expect(await catalogue.getDocument("pt-b")).toBeUndefined();
      expect(await catalogue.removeDocuments(["missing"])).toBe(0);
    } finally {
      await catalogue.close();
    }
  });

  it("stores chunk texts and terms given as UTF-8 bytes as the same text a string gives", async () => {
    const catalogue = await open();
    try {
      const pieces = ["Ação rápida — ", "Ελληνικά 😀 e fim."];
      const asBytes = doc("bytes", pieces);
      asBytes.chunks = asBytes.chunks.map((chunk) => ({
        ...chunk,
        text: new TextEncoder().encode(chunk.text as string),
        terms: new TextEncoder().encode(`${chunk.terms as string} ελλην ação`),
      }));
      const before = (await catalogue.chunkTermsAfter(0, 100_000)).at(-1)?.seq ?? 0;
      await catalogue.replaceDocuments([asBytes]);
      expect((await catalogue.getDocument("bytes"))?.body).toBe(pieces.join(""));
      expect((await catalogue.chunkTermsAfter(before, 10)).map((row) => row.terms)).toEqual([
        "t0 bytes ελλην ação",
        "t1 bytes ελλην ação",
      ]);
      expect((await catalogue.chunkTextsAfter(before, 10)).map((row) => row.text)).toEqual(pieces);
    } finally {
      await catalogue.close();
    }
  });

  it("records a source stat only over the version it was found equal to", async () => {
    const catalogue = await open();
    try {
      const fingerprint = (await catalogue.documentFingerprints("docs")).get("a") as string;
      await catalogue.recordSourceStats([
        { id: "a", fingerprint, sourceStat: "1:2:3" },
        { id: "a", fingerprint: "p1:stale", sourceStat: "9:9:9" },
      ]);
      expect((await catalogue.documentStates("docs")).get("a")).toEqual({ fingerprint, sourceStat: "1:2:3" });
    } finally {
      await catalogue.close();
    }
  });

  it("lets a follower on another connection see every chunk exactly once while two writers race", async () => {
    const [writerA, writerB, follower] = [await open(), await open(), await open()];
    try {
      const instance = await follower.instance();
      expect(instance).toMatch(/^[0-9a-f]{32}$/);
      let seen = (await follower.chunkTermsAfter(0, 1000)).at(-1)?.seq ?? 0;
      const seenTerms: string[] = [];
      let writing = true;
      const follow = (async () => {
        while (writing) {
          for (const row of await follower.chunkTermsAfter(seen, 1000)) {
            seenTerms.push(row.terms);
            seen = row.seq;
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      await Promise.all(
        [writerA, writerB].map(async (writer, w) => {
          for (let i = 0; i < 15; i++) await writer.replaceDocuments([doc(`w${w}-${i}`, ["x ", "y ", "z"])]);
        }),
      );
      writing = false;
      await follow;
      for (const row of await follower.chunkTermsAfter(seen, 1000)) seenTerms.push(row.terms);
      expect(seenTerms).toHaveLength(90);
      expect(new Set(seenTerms).size).toBe(90);
      expect(await follower.instance()).toBe(instance);
    } finally {
      await Promise.all([writerA.close(), writerB.close(), follower.close()]);
    }
  });

  it("counts completion matches only up to its cap, so a keystroke never counts a whole connector", async () => {
    const catalogue = await open();
    try {
      await catalogue.replaceDocuments(
        Array.from({ length: MAX_COUNTED_COMPLETIONS + 5 }, (_, index) => {
          const replacement = doc(`many${index}`, ["x"]);
          replacement.document.connector = "many";
          return replacement;
        }),
      );
      expect(await catalogue.completePaths("many", "", 3)).toEqual({
        paths: ["many0.md", "many1.md", "many10.md"],
        total: MAX_COUNTED_COMPLETIONS,
      });
      expect(await catalogue.completePaths("many", "many100", 100)).toMatchObject({ total: 6 });
    } finally {
      await catalogue.close();
    }
  });

  it("finds documents by path, lists them in bytewise keyset pages and completes path prefixes", async () => {
    const catalogue = await open();
    try {
      // Bytewise order, on both backends: "B" < "a", "a.md" < "a/b.md" ('.' < '/'), "é" after every ASCII letter.
      const paths = ["a/b.md", "a.md", "B.md", "a/c d.md", "é.md", "a/b/z.md", "ab.md"];
      await catalogue.replaceDocuments(
        paths.map((relPath, index) => {
          const replacement = doc(`kp${index}`, [`body of ${relPath}`]);
          replacement.document.connector = "keyset";
          replacement.document.rel_path = relPath;
          return replacement;
        }),
      );
      const found = await catalogue.getDocumentByPath("keyset", "a/c d.md");
      expect(found?.id).toBe("kp3");
      expect(found?.body).toBe("body of a/c d.md");
      expect(await catalogue.getDocumentByPath("keyset", "A/c d.md")).toBeUndefined();
      expect(await catalogue.getDocumentByPath("docs", "a/c d.md")).toBeUndefined();

      // Every document exactly once, through pages of 3, in (connector, rel_path) bytewise order.
      const seen: { connector: string; rel_path: string }[] = [];
      let after: { connector: string; rel_path: string } | undefined;
      for (;;) {
        const page = await catalogue.listDocuments({ ...(after ? { after } : {}), limit: 3 });
        expect(page.length).toBeLessThanOrEqual(3);
        seen.push(...page.map((d) => ({ connector: d.connector, rel_path: d.rel_path })));
        const last = page.at(-1);
        if (page.length < 3 || !last) break;
        after = { connector: last.connector, rel_path: last.rel_path };
      }
      const bytewise = (
        x: { connector: string; rel_path: string },
        y: { connector: string; rel_path: string },
      ) =>
        Buffer.compare(Buffer.from(x.connector), Buffer.from(y.connector)) ||
        Buffer.compare(Buffer.from(x.rel_path), Buffer.from(y.rel_path));
      expect(seen).toEqual([...seen].sort(bytewise));
      expect(new Set(seen.map((d) => `${d.connector}\u0000${d.rel_path}`)).size).toBe(seen.length);
      expect(seen.length).toBe((await catalogue.stats()).documents);
      expect(seen.filter((d) => d.connector === "keyset").map((d) => d.rel_path)).toEqual([
        "B.md",
        "a.md",
        "a/b.md",
        "a/b/z.md",
        "a/c d.md",
        "ab.md",
        "é.md",
      ]);

      expect(await catalogue.completePaths("keyset", "a/", 10)).toEqual({
        paths: ["a/b.md", "a/b/z.md", "a/c d.md"],
        total: 3,
      });
      expect(await catalogue.completePaths("keyset", "a", 2)).toEqual({
        paths: ["a.md", "a/b.md"],
        total: 5,
      });
      expect(await catalogue.completePaths("keyset", "", 100)).toMatchObject({ total: 7 });
      expect(await catalogue.completePaths("keyset", "é", 10)).toEqual({ paths: ["é.md"], total: 1 });
      // LIKE wildcards are plain characters here.
      expect(await catalogue.completePaths("keyset", "a_", 10)).toEqual({ paths: [], total: 0 });
      expect(await catalogue.completePaths("keyset", "%", 10)).toEqual({ paths: [], total: 0 });
      expect(await catalogue.completePaths("nope", "a", 10)).toEqual({ paths: [], total: 0 });
    } finally {
      await catalogue.close();
    }
  });
});
