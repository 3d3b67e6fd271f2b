// Memory's vectors on both backends, as two gateway replicas share them: what one embeds the other loads from the
// memory database (page_vectors) instead of embedding again, and a page removed on one leaves both.
import path from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { serverConfigSchema } from "../../config/server-config.js";
import { silentLogger } from "../../shared/logger.js";
import type { Embedder } from "../context/embedder.js";
import { unigramModelDir } from "../context/onnx/onnx.test-kit.js";
import { createOnnxEmbedder } from "../context/onnx/onnx-embedder.js";
import { describeBackends } from "../store/backends.test-kit.js";
import { preparePageWrite } from "./page-write.js";
import { createMemoryStore, type MemoryStore } from "./store.js";
import { createMemoryVectors } from "./vectors.js";

const AT = "2026-12-07T09:00:00.000Z";

describeBackends("memory vectors shared by replicas", (kit) => {
  let model: { dir: string; cleanup: () => Promise<void> };
  let embedder: Embedder;
  let count = 0;
  const opened: MemoryStore[] = [];
  beforeAll(async () => {
    model = await tempDir();
    const dir = path.join(model.dir, "model");
    const config = serverConfigSchema.parse({
      server: { public_url: "http://127.0.0.1:1" },
      context: {
        embedder: { provider: "onnx", model_dir: dir, sha256: await unigramModelDir(dir), dims: 4 },
      },
    }).context.embedder;
    if (config.provider !== "onnx") throw new Error("not onnx");
    embedder = createOnnxEmbedder(config);
  });
  afterAll(() => model.cleanup());
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  const replicas = async () => {
    const name = `memory_vectors_${++count}`;
    const a = await createMemoryStore(await kit.open(name));
    const b = await createMemoryStore(await kit.open(name));
    opened.push(a, b);
    return [a, b] as const;
  };
  const passagesOf = (counter: { passages: number }): Embedder => ({
    ...embedder,
    embed: async (texts, kind) => {
      if (kind === "passage") counter.passages += texts.length;
      return embedder.embed(texts, kind);
    },
  });

  it("embeds a page once for both replicas, and drops a removed page's vector from both", async () => {
    const [a, b] = await replicas();
    const write = (path: string, body: string) =>
      a.writePage(preparePageWrite({ scope: "team:core", path, body, author: "agent" }), AT);
    await write("notes/parking", "the car is in the garage");
    await write("notes/plans", "a holiday in june");
    const first = { passages: 0 };
    const second = { passages: 0 };
    const onA = createMemoryVectors({ store: a, embedder: passagesOf(first), logger: silentLogger });
    const onB = createMemoryVectors({ store: b, embedder: passagesOf(second), logger: silentLogger });
    expect(await onA.refresh()).toEqual({ embedded: 2, total: 2 });
    expect(await onB.refresh()).toEqual({ embedded: 0, total: 2 });
    expect([first.passages, second.passages]).toEqual([2, 0]);
    const parking = await b.getPage("team:core", "notes/parking");
    expect((await onB.search("automobile", ["team:core"], 1))[0]?.key).toBe(parking?.key);

    // Replaced on A: both replicas catch up by tombstone; the old key's vector leaves the table.
    const replaced = await write("notes/parking", "the automobile left for the street");
    await onA.refresh();
    await onB.refresh();
    const stored = await b.vectors.load(onB.name, 4);
    expect([...stored.keys()].sort()).toEqual(
      [String(replaced.key), String((await b.getPage("team:core", "notes/plans"))?.key)].sort(),
    );
    expect(onB.standing().vectors).toBe(2);
    expect((await onB.search("car", ["team:core"], 1))[0]?.key).toBe(replaced.key);
    expect(await onB.search("car", ["team:elsewhere"], 5)).toEqual([]);
  });
});
