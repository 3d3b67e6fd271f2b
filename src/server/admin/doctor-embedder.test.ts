import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serverConfigSchema } from "../../config/server-config.js";
import { unigramModelDir } from "../context/onnx/onnx.test-kit.js";
import type { VectorRetriever } from "../context/vectors.js";
import { checkEmbedder, checkMemoryRanking } from "./doctor-embedder.js";

const embedderOf = (embedder: Record<string, unknown>) =>
  serverConfigSchema.parse({ server: { public_url: "http://127.0.0.1:1" }, context: { embedder } }).context
    .embedder;

/** A retriever as doctor sees it: only its standing is read. */
function standingOnly(vectors: number | undefined): VectorRetriever {
  const refuse = () => Promise.reject(new Error("doctor must not search or embed"));
  return {
    name: "ivoai-context-v1-m-d4-0a1b2c3d",
    active: () => true,
    standing: () => ({ name: "ivoai-context-v1-m-d4-0a1b2c3d", dims: 4, format: "int8", vectors }),
    ready: refuse,
    sync: refuse,
    search: refuse,
  };
}

describe("doctor's embedder line", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it("says lexical only without a provider, and when the corpus model is not trained yet", async () => {
    expect(await checkEmbedder(embedderOf({ provider: "none" }), undefined)).toMatchObject({
      status: "ok",
      detail: expect.stringContaining("lexical search only"),
    });
    const corpus = embedderOf({ provider: "corpus", min_chunks: 500 });
    const untrained = { ...standingOnly(0), model: () => undefined };
    expect((await checkEmbedder(corpus, untrained)).detail).toMatch(/not trained yet, it needs 500 chunks/);
  });

  it("names the onnx model, its pins, the vectors and the runtime; fails on a file changed since start", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-doctor-model-"));
    dirs.push(dir);
    const sha256 = await unigramModelDir(dir);
    const config = embedderOf({ provider: "onnx", model_dir: dir, sha256, dims: 4 });
    const good = await checkEmbedder(config, standingOnly(1200));
    expect(good.status).toBe("ok");
    expect(good.detail).toContain(`model.onnx sha256 ${sha256["model.onnx"]?.slice(0, 12)}…`);
    expect(good.detail).toContain("4 dims, 1,200 int8 vectors in ivoai-context-v1-m-d4-0a1b2c3d");
    expect(good.detail).toMatch(/onnxruntime-node \d+\.\d+\.\d+ loads/);
    expect((await checkEmbedder(config, standingOnly(undefined))).detail).toContain("vectors not loaded yet");

    await appendFile(path.join(dir, "tokenizer.json"), " ");
    const bad = await checkEmbedder(config, standingOnly(1200));
    expect(bad.status).toBe("fail");
    expect(bad.detail).toMatch(
      /tokenizer\.json does not match its pin: sha256 [0-9a-f]{12}…, pinned [0-9a-f]{12}…/,
    );
  });

  it("says why memory ranks lexically, or which vectors it fuses", () => {
    const configOf = (embedder: Record<string, unknown>, memory: Record<string, unknown> = {}) =>
      serverConfigSchema.parse({
        server: { public_url: "http://127.0.0.1:1" },
        context: { embedder },
        memory,
      });
    const tei = { provider: "tei", url: "http://127.0.0.1:9", model: "m", dims: 4 };
    const memoryVectors = {
      name: "ivoai-memory-v1-m-d4",
      standing: () => ({ name: "ivoai-memory-v1-m-d4", dims: 4, format: "int8" as const, vectors: 12 }),
      refresh: () => Promise.reject(new Error("doctor must not embed")),
      search: () => Promise.reject(new Error("doctor must not search")),
    };
    expect(checkMemoryRanking(configOf({ provider: "none" }), undefined, true).detail).toBe(
      "lexical only: no embedding model ([context.embedder])",
    );
    expect(checkMemoryRanking(configOf({ provider: "corpus" }), undefined, true).detail).toMatch(
      /^lexical only: the corpus embedder is not used for memory/,
    );
    expect(checkMemoryRanking(configOf(tei, { vector_weight: 0 }), undefined, true).detail).toBe(
      "lexical only: [memory] vector_weight = 0",
    );
    expect(checkMemoryRanking(configOf(tei), memoryVectors, true)).toEqual({
      name: "memory_ranking",
      status: "ok",
      detail: "lexical fused with tei vectors at weight 1, 4 dims, 12 int8 vectors in ivoai-memory-v1-m-d4",
    });
    expect(checkMemoryRanking(configOf(tei), memoryVectors, false).status).toBe("warn");
  });
});
