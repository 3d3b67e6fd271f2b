// Memory's vectors with a real onnx model made here (onnx.test-kit.ts's concept table: car/automobile on one axis,
// holiday/vacation on another) over a real SQLite store: memory_query finds a page by meaning, only in the
// caller's scopes, embeds each page once across restarts, forgets replaced pages, and ranks lexically when the
// model fails.
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { serverConfigSchema } from "../../config/server-config.js";
import type { Logger } from "../../shared/logger.js";
import type { Embedder } from "../context/embedder.js";
import { unigramModelDir } from "../context/onnx/onnx.test-kit.js";
import { createOnnxEmbedder } from "../context/onnx/onnx-embedder.js";
import { type PageInput, preparePageWrite } from "./page-write.js";
import { createMemorySearcher } from "./query.js";
import { type MemoryStore, openMemoryStore } from "./store.js";
import { createMemoryVectors } from "./vectors.js";

const AT = "2026-06-10T09:00:00.000Z";

/** A logger that keeps what was warned. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const quiet = () => {};
  return {
    warnings,
    debug: quiet,
    info: quiet,
    error: quiet,
    warn: (message) => void warnings.push(message),
  };
}

/** Counts the texts it is asked to embed. */
function counting(embedder: Embedder): Embedder & { passages: number } {
  const counted = {
    ...embedder,
    passages: 0,
    async embed(texts: readonly string[], kind: "query" | "passage") {
      if (kind === "passage") counted.passages += texts.length;
      return embedder.embed(texts, kind);
    },
  };
  return counted;
}

describe("memory vectors", () => {
  let cleanup: () => Promise<void>;
  let dir: string;
  let file: string;
  let store: MemoryStore;
  let embedder: Embedder;
  const write = (page: Omit<PageInput, "author" | "scope"> & { scope?: string }) =>
    store.writePage(preparePageWrite({ scope: "team:core", author: "agent", ...page }), AT);
  const onnx = (modelDir: string, sha256: Record<string, string>) => {
    const config = serverConfigSchema.parse({
      server: { public_url: "http://127.0.0.1:1" },
      context: { embedder: { provider: "onnx", model_dir: modelDir, sha256, dims: 4 } },
    }).context.embedder;
    if (config.provider !== "onnx") throw new Error("not onnx");
    return createOnnxEmbedder(config);
  };

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = path.join(dir, "memory.sqlite");
    store = await openMemoryStore(file);
    const modelDir = path.join(dir, "model");
    embedder = onnx(modelDir, await unigramModelDir(modelDir));
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it("finds a page by meaning, in the caller's scopes only, fused with the lexical ranking", async () => {
    await write({ path: "notes/parking", body: "the car is in the garage" });
    await write({ path: "notes/plans", body: "a holiday in june" });
    await write({ path: "notes/other", scope: "team:other", body: "a car of the other team" });
    const logger = recordingLogger();
    const vectors = createMemoryVectors({ store, embedder, logger });
    const searcher = createMemorySearcher(store, undefined, { vectors, logger });
    expect(await vectors.refresh()).toEqual({ embedded: 3, total: 3 });

    // "automobile" is in no page: only the vectors know it means car.
    const hits = await searcher.search("automobile", ["team:core"], 10);
    expect(hits.map((hit) => [hit.page.path, hit.via])).toEqual([
      ["notes/parking", ["vector"]],
      ["notes/plans", ["vector"]],
    ]);
    const other = await searcher.search("automobile", ["team:other"], 10);
    expect(other.map((hit) => hit.page.path)).toEqual(["notes/other"]);
    // A page both rankings find says so, and leads.
    const both = await searcher.search("car vacation", ["team:core"], 10);
    expect(both[0]?.page.path).toBe("notes/parking");
    expect(both[0]?.via).toEqual(["lexical", "vector"]);
    // Without vectors the same question finds nothing.
    expect(await createMemorySearcher(store).search("automobile", ["team:core"], 10)).toEqual([]);
    expect(logger.warnings).toEqual([]);
  });

  it("embeds a page once across restarts, and forgets a replaced page's vector", async () => {
    const first = await write({ path: "notes/parking", body: "the car is in the garage" });
    await write({ path: "notes/plans", body: "a holiday in june" });
    const once = counting(embedder);
    const vectors = createMemoryVectors({ store, embedder: once, logger: recordingLogger() });
    await vectors.refresh();
    expect(once.passages).toBe(2);

    // A new page is embedded at the next search; the replaced page's old vector leaves the table.
    await write({ path: "notes/parking", body: "the automobile moved to the street" });
    await write({ path: "notes/more", body: "vacation photos" });
    expect((await vectors.search("holiday", ["team:core"], 10)).length).toBe(3);
    expect(once.passages).toBe(4);
    const stored = await store.vectors.load(vectors.name, 4);
    expect(stored.has(String(first.key))).toBe(false);
    expect(stored.size).toBe(3);

    // Another process over the same file embeds nothing: the vectors are in the database.
    const reopened = await openMemoryStore(file);
    try {
      const again = counting(embedder);
      const restarted = createMemoryVectors({ store: reopened, embedder: again, logger: recordingLogger() });
      expect(await restarted.refresh()).toEqual({ embedded: 0, total: 3 });
      expect(again.passages).toBe(0);
      expect(restarted.standing()).toMatchObject({ name: vectors.name, dims: 4, format: "int8", vectors: 3 });
    } finally {
      await reopened.close();
    }
  });

  it("ranks lexically, and says why, when the model cannot be loaded", async () => {
    await write({ path: "notes/parking", body: "the car is in the garage" });
    const logger = recordingLogger();
    const broken = onnx(path.join(dir, "model"), {
      "model.onnx": "0".repeat(64),
      "tokenizer.json": "0".repeat(64),
    });
    const vectors = createMemoryVectors({ store, embedder: broken, logger });
    const searcher = createMemorySearcher(store, undefined, { vectors, logger });
    const hits = await searcher.search("car", ["team:core"], 10);
    expect(hits.map((hit) => [hit.page.path, hit.via])).toEqual([["notes/parking", ["lexical"]]]);
    expect(logger.warnings).toContain("memory vector search failed; ranking lexically");
  });
});
