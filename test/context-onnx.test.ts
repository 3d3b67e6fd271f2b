// provider = "onnx" end to end in process: a tiny hand-written ONNX model and tokenizer, pinned; verify, embed,
// store int8 vectors (file store and PostgreSQL), search, rebuild after a pin change, refuse tampered/missing files.
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseServerConfig, saveServerConfig, serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEmbedder } from "../src/server/context/embedder.js";
import {
  conceptTable,
  tinyOnnxModel,
  unigramModelDir,
  WORDPIECE_VOCAB,
  wordPieceTokenizerJson,
  writeModelDir,
} from "../src/server/context/onnx/onnx.test-kit.js";
import { openCatalogue, openContextService } from "../src/server/context/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { contextTree, writeTree } from "./context-helpers.js";
import { tempDir } from "./helpers.js";
import { createThrowawayDatabase } from "./postgres.js";

const DIMS = 4;

function onnxConfig(modelDir: string, sha256: Record<string, string>, extra: Record<string, unknown> = {}) {
  return serverConfigSchema.parse({
    server: { public_url: "http://127.0.0.1:1" },
    ...extra,
    context: { embedder: { provider: "onnx", model_dir: modelDir, sha256, dims: DIMS } },
  });
}

describe("the onnx embedder", () => {
  it("embeds with the configured prefixes, mean-pooled and L2-normalised, for both tokenizer kinds", async () => {
    const made = await tempDir("ivoai-model-");
    try {
      const pins = await unigramModelDir(made.dir);
      const embedder = createEmbedder(onnxConfig(made.dir, pins).context.embedder);
      const [car, holiday] = (await embedder?.embed(["car", "vacation"], "query")) ?? [];
      expect(car?.length).toBe(DIMS);
      expect(Math.hypot(...(car ?? []))).toBeCloseTo(1, 5);
      // "query: car" → <s> query: ▁car </s> … the car axis dominates.
      expect(car?.[0]).toBeGreaterThan(0.8);
      expect(holiday?.[1]).toBeGreaterThan(0.8);

      const bertDir = path.join(made.dir, "bert");
      const vocab = Object.keys(WORDPIECE_VOCAB);
      const bertPins = await writeModelDir(bertDir, {
        "model.onnx": tinyOnnxModel({ table: conceptTable(vocab), extraInputs: ["token_type_ids"] }),
        "tokenizer.json": wordPieceTokenizerJson(),
      });
      const bert = createEmbedder(onnxConfig(bertDir, bertPins).context.embedder);
      const [vector] = (await bert?.embed(["Automobile"], "passage")) ?? [];
      expect(vector?.[0]).toBeGreaterThan(0.8);
    } finally {
      await made.cleanup();
    }
  });

  it("refuses a tampered, unpinned or missing file naming it and both digests, and a wrong dims", async () => {
    const made = await tempDir("ivoai-model-");
    try {
      const pins = await unigramModelDir(made.dir);
      await writeFile(
        path.join(made.dir, "tokenizer.json"),
        `${await readFile(path.join(made.dir, "tokenizer.json"), "utf8")} `,
      );
      const tampered = createEmbedder(onnxConfig(made.dir, pins).context.embedder);
      const pinned = (pins["tokenizer.json"] as string).slice(0, 12);
      await expect(tampered?.ready?.()).rejects.toThrow(
        new RegExp(`tokenizer\\.json does not match its pin: sha256 [0-9a-f]{12}…, pinned ${pinned}…`),
      );
      const { "model.onnx": _, ...withoutModelPin } = pins;
      await expect(
        createEmbedder(onnxConfig(made.dir, withoutModelPin).context.embedder)?.ready?.(),
      ).rejects.toThrow(/model\.onnx is not pinned \(sha256 [0-9a-f]{12}…\)/);
      await rm(path.join(made.dir, "model.onnx"));
      await expect(createEmbedder(onnxConfig(made.dir, pins).context.embedder)?.ready?.()).rejects.toThrow(
        `the embedding model file model.onnx is missing from ${made.dir}`,
      );
      const fresh = await unigramModelDir(made.dir);
      const wrongDims = serverConfigSchema.parse({
        server: { public_url: "http://127.0.0.1:1" },
        context: { embedder: { provider: "onnx", model_dir: made.dir, sha256: fresh, dims: 8 } },
      });
      await expect(createEmbedder(wrongDims.context.embedder)?.ready?.()).rejects.toThrow(
        "outputs 4-dimensional vectors; context.embedder.dims is 8",
      );
    } finally {
      await made.cleanup();
    }
  });

  it("refuses a config still naming provider local, saying what to write", () => {
    const toml =
      '[server]\npublic_url = "http://127.0.0.1:1"\n[context.embedder]\nprovider = "local"\nmodel_dir = "/m"\n';
    expect(() => parseServerConfig(toml, "server.toml")).toThrow(
      /provider "local" was replaced by "onnx": write provider = "onnx", model_dir and sha256/,
    );
  });
});

describe("hybrid retrieval with the onnx embedder", () => {
  it("stores int8 vectors in the file store, finds by meaning, and rebuilds under a new name after a pin change", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    const model = await tempDir("ivoai-model-");
    try {
      await writeTree(source.dir, {
        "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
        "people.md": "# People\n\nOur vacation requests go through the portal.",
      });
      const pins = await unigramModelDir(model.dir);
      const paths = serverPaths(made.root);
      const context = openContextService({
        paths,
        config: onnxConfig(model.dir, pins),
        logger: silentLogger,
      });
      let first: string;
      try {
        await context.vectors?.ready();
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        expect((await context.searcher.search("car", { limit: 1 }))[0]?.document.rel_path).toBe("fleet.md");
        expect((await context.searcher.search("holiday", { limit: 1 }))[0]?.document.rel_path).toBe(
          "people.md",
        );
        first = context.vectors?.name as string;
        expect(first).toMatch(/^ivoai-context-v1-multilingual-e5-small-d4-[0-9a-f]{8}$/);
        const file = await readFile(path.join(paths.contextDir, "vectors", `${first}.bin`));
        expect(file.toString("ascii", 0, 4)).toBe("IVV2");
        expect(file[12]).toBe(1); // int8
        expect(file.length).toBe(16 + 2 * (32 + 4 + DIMS));
      } finally {
        await context.close();
      }
      // A new model (its pins change): a new index name, every vector recomputed.
      const newPins = await unigramModelDir(model.dir, { swapped: true });
      const again = openContextService({
        paths,
        config: onnxConfig(model.dir, newPins),
        logger: silentLogger,
      });
      try {
        expect(again.vectors?.name).not.toBe(first);
        expect((await again.vectors?.sync())?.embedded).toBe(2);
        expect((await readdir(path.join(paths.contextDir, "vectors"))).sort()).toEqual(
          [`${first}.bin`, `${again.vectors?.name}.bin`].sort(),
        );
      } finally {
        await again.close();
      }
    } finally {
      await Promise.all([made.cleanup(), source.cleanup(), model.cleanup()]);
    }
  });

  it("reads an earlier release's float32 cache file (IVV1) without re-embedding", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    const model = await tempDir("ivoai-model-");
    try {
      await writeTree(source.dir, { "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring." });
      const pins = await unigramModelDir(model.dir);
      const paths = serverPaths(made.root);
      const floatConfig = onnxConfig(model.dir, pins);
      if (floatConfig.context.embedder.provider === "onnx")
        floatConfig.context.embedder.vector_format = "float32";
      const context = openContextService({ paths, config: floatConfig, logger: silentLogger });
      let name: string;
      try {
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        name = context.vectors?.name as string;
      } finally {
        await context.close();
      }
      // Rewrite the IVV2 float32 file as the IVV1 layout earlier releases wrote (12-byte header, same records).
      const file = path.join(paths.contextDir, "vectors", `${name}.bin`);
      const v2 = await readFile(file);
      expect(v2[12]).toBe(0);
      const v1 = Buffer.concat([Buffer.from("IVV1", "ascii"), v2.subarray(4, 12), v2.subarray(16)]);
      await writeFile(file, v1);
      const again = openContextService({ paths, config: onnxConfig(model.dir, pins), logger: silentLogger });
      try {
        expect((await again.vectors?.sync())?.embedded).toBe(0);
        expect((await again.searcher.search("automobile", { limit: 1 }))[0]?.document.rel_path).toBe(
          "fleet.md",
        );
      } finally {
        await again.close();
      }
    } finally {
      await Promise.all([made.cleanup(), source.cleanup(), model.cleanup()]);
    }
  });

  it("keeps int8 vectors in PostgreSQL (bytea, 4 + dims bytes) that a replica searches", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    const model = await tempDir("ivoai-model-");
    const database = await createThrowawayDatabase();
    try {
      await writeTree(source.dir, {
        "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
        "people.md": "# People\n\nOur vacation requests go through the portal.",
      });
      const pins = await unigramModelDir(model.dir);
      const paths = serverPaths(made.root);
      await writeFile(path.join(paths.secretsDir, "postgres.url"), `${database.url}\n`, { mode: 0o600 });
      const config = onnxConfig(model.dir, pins, { store: { backend: "postgres" } });
      await saveServerConfig(paths.configFile, config);
      const open = async () =>
        openContextService({ paths, config, logger: silentLogger, catalogue: await openCatalogue(paths) });
      const ingester = await open();
      const replica = await open();
      try {
        await ingester.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await ingester.ingest([]);
        expect((await replica.searcher.search("vacation", { limit: 1 }))[0]?.document.rel_path).toBe(
          "people.md",
        );
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ size: number }>(
            "SELECT length(vector) AS size FROM ivoai_context.chunk_vectors",
          );
          expect(rows.map((row) => Number(row.size))).toEqual([4 + DIMS, 4 + DIMS]);
        } finally {
          await client.end();
        }
      } finally {
        await Promise.all([ingester.close(), replica.close()]);
      }
    } finally {
      await database.drop();
      await Promise.all([made.cleanup(), source.cleanup(), model.cleanup()]);
    }
  });
});
