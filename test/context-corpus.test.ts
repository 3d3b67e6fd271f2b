// The corpus embedder through the context service: a model learned at ingest from the catalogue's own chunks,
// kept with the catalogue (a file beside SQLite, a table in PostgreSQL), folded into for a few new chunks and
// retrained (under a new vector index name) when the corpus grew enough.
import { readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { type ServerConfig, saveServerConfig, serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { openSqliteCatalogue } from "../src/server/context/catalogue.js";
import { encodeCorpusModel } from "../src/server/context/corpus-model.js";
import type { CorpusVectorRetriever } from "../src/server/context/corpus-vectors.js";
import { catalogueFile, openCatalogue, openContextService } from "../src/server/context/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { contextTree, writeTree } from "./context-helpers.js";
import { tempDir } from "./helpers.js";
import { createThrowawayDatabase } from "./postgres.js";
import { ownWord, synonymCorpus } from "./synonym-corpus.js";

const corpusConfig = (extra: Record<string, unknown> = {}): ServerConfig =>
  serverConfigSchema.parse({
    server: { public_url: "http://127.0.0.1:1" },
    context: { embedder: { provider: "corpus", dims: 8, ...extra } },
    ...("store" in extra ? {} : {}),
  });

const paths = (hits: { document: { rel_path: string } }[]) => hits.map((hit) => hit.document.rel_path);

describe("the corpus embedder", () => {
  it("learns a synonym from the corpus, keeps its model beside the catalogue, folds in and retrains", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    try {
      const { files, target } = synonymCorpus();
      await writeTree(source.dir, files);
      const server = serverPaths(made.root);
      const config = corpusConfig();
      const context = openContextService({ paths: server, config, logger: silentLogger });
      let firstName: string;
      let firstModel: Buffer;
      try {
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        const found = paths(await context.searcher.search("automobile", { limit: 24 }));
        expect(found).toContain(target);
        // Lexical hits (the word itself) still lead.
        expect(found.slice(0, 12).every((file) => files[file]?.startsWith("Automobile"))).toBe(true);
        const vectors = context.vectors as CorpusVectorRetriever;
        const model = vectors.model();
        expect(model?.trainedChunks).toBe(72);
        firstName = vectors.name;
        firstModel = encodeCorpusModel(model as NonNullable<typeof model>);
        expect(firstName).toBe(`ivoai-context-v1-corpus-${model?.id}-d8`);
        expect(await readdir(path.join(server.contextDir, "vectors"))).toEqual([`${firstName}.bin`]);
        expect((await stat(path.join(server.contextDir, "corpus-model.bin"))).size).toBeGreaterThan(0);

        // A few new chunks (+2 of 72, under 25 %): folded in with the same model, the index name unchanged.
        await writeTree(source.dir, { "newcar.md": "Car engine wheel.\n", "newer.md": "Car wheel.\n" });
        await context.ingest([]);
        expect(vectors.name).toBe(firstName);
        expect(paths(await context.searcher.search("automobile", { limit: 26 }))).toContain("newcar.md");
      } finally {
        await context.close();
      }

      // A restart loads the same model and its vectors: nothing is embedded again.
      const again = openContextService({ paths: server, config, logger: silentLogger });
      try {
        const vectors = again.vectors as CorpusVectorRetriever;
        expect(await vectors.sync()).toEqual({ embedded: 0, total: 74 });
        expect(vectors.name).toBe(firstName);
        expect(encodeCorpusModel(vectors.model() as NonNullable<ReturnType<typeof vectors.model>>)).toEqual(
          firstModel,
        );

        // +20 chunks (over 25 % of the 72 trained on): retrained, a new index name, vectors recomputed.
        const more: Record<string, string> = {};
        for (let i = 100; i < 120; i++)
          more[`${ownWord(i)}.md`] = `Garden soil compost seed ${ownWord(i)}.\n`;
        await writeTree(source.dir, more);
        await again.ingest([]);
        expect(vectors.model()?.trainedChunks).toBe(94);
        expect(vectors.name).not.toBe(firstName);
        expect(await readdir(path.join(server.contextDir, "vectors"))).toEqual([`${vectors.name}.bin`]);
        expect(paths(await again.searcher.search("automobile", { limit: 24 }))).toContain(target);
      } finally {
        await again.close();
      }
    } finally {
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("asks the catalogue for its generation once per search for the vectors, besides the lexical index", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    try {
      await writeTree(source.dir, synonymCorpus().files);
      const server = serverPaths(made.root);
      const config = corpusConfig();
      const catalogue = openSqliteCatalogue(catalogueFile(server));
      let asked = 0;
      const counted = {
        ...catalogue,
        generation: () => {
          asked++;
          return catalogue.generation();
        },
      };
      const context = openContextService({ paths: server, config, logger: silentLogger, catalogue: counted });
      try {
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        const lexicalOnly = async () => {
          const before = asked;
          await context.searcher.search("automobile", { limit: 10, mode: "lexical" });
          return asked - before;
        };
        const lexical = await lexicalOnly();
        const before = asked;
        for (let i = 0; i < 10; i++) await context.searcher.search("automobile", { limit: 10 });
        expect((asked - before) / 10).toBe(lexical + 1);
      } finally {
        await context.close();
      }
    } finally {
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("trains a new model when the stored one is damaged, and searches on", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    try {
      const { files, target } = synonymCorpus();
      await writeTree(source.dir, files);
      const server = serverPaths(made.root);
      const config = corpusConfig();
      const context = openContextService({ paths: server, config, logger: silentLogger });
      let trained: string | undefined;
      try {
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        trained = (context.vectors as CorpusVectorRetriever).model()?.id;
      } finally {
        await context.close();
      }
      // Keep the id in front (so the store says a model is there), damage what follows.
      const file = path.join(server.contextDir, "corpus-model.bin");
      await writeFile(
        file,
        Buffer.concat([Buffer.from("0123456789abcdef", "ascii"), Buffer.from("ICM1\xff\xff")]),
      );
      const warnings: string[] = [];
      const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
      const again = openContextService({ paths: server, config, logger });
      try {
        expect(paths(await again.searcher.search("automobile", { limit: 24 }))).toContain(target);
        expect(warnings.join("\n")).toMatch(/corpus model is unreadable .*training a new one/);
        expect((again.vectors as CorpusVectorRetriever).model()?.id).toBe(trained);
        // The damaged file was replaced by the new model.
        expect((await stat(file)).size).toBeGreaterThan(100);
      } finally {
        await again.close();
      }
    } finally {
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("keeps the model in PostgreSQL, where a replica loads the same one", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    const database = await createThrowawayDatabase();
    try {
      const { files, target } = synonymCorpus();
      await writeTree(source.dir, files);
      const server = serverPaths(made.root);
      await writeFile(path.join(server.secretsDir, "postgres.url"), `${database.url}\n`, { mode: 0o600 });
      const config = serverConfigSchema.parse({
        server: { public_url: "http://127.0.0.1:1" },
        store: { backend: "postgres" },
        context: { embedder: { provider: "corpus", dims: 8 } },
      });
      await saveServerConfig(server.configFile, config);
      const open = async () =>
        openContextService({
          paths: server,
          config,
          logger: silentLogger,
          catalogue: await openCatalogue(server),
        });
      const ingester = await open();
      const replica = await open();
      try {
        await ingester.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await ingester.ingest([]);
        expect(paths(await replica.searcher.search("automobile", { limit: 24 }))).toContain(target);
        const mine = (ingester.vectors as CorpusVectorRetriever).model();
        const theirs = (replica.vectors as CorpusVectorRetriever).model();
        expect(theirs?.id).toBe(mine?.id);
        expect(encodeCorpusModel(theirs as NonNullable<typeof theirs>)).toEqual(
          encodeCorpusModel(mine as NonNullable<typeof mine>),
        );
        expect(replica.vectors?.name).toBe(ingester.vectors?.name);
        // Nothing beside the catalogue folder: model and vectors live in PostgreSQL.
        await expect(stat(path.join(server.contextDir, "corpus-model.bin"))).rejects.toThrow(/ENOENT/);
      } finally {
        await Promise.all([ingester.close(), replica.close()]);
      }
    } finally {
      await database.drop();
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("names the field of a bad corpus setting", () => {
    for (const [field, value] of [
      ["dims", 0],
      ["dims", 4096],
      ["weighting", "bm25"],
      ["retrain_growth", -1],
    ] as const) {
      const parsed = serverConfigSchema.safeParse({
        server: { public_url: "http://127.0.0.1:1" },
        context: { embedder: { provider: "corpus", [field]: value } },
      });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path.join(".")).toBe(`context.embedder.${field}`);
    }
  });
});
