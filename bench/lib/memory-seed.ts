// A memory store of many seeded pages for the memory and approvals benchmarks, written through the store's
// own write path and cached under the temp dir: seeding 500,000 pages takes minutes.
import { mkdir, rename, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { preparePageWrite } from "../../src/server/memory/page-write.js";
import { openMemoryStore, type PageWrite } from "../../src/server/memory/store.js";
import { createRandom, sentencePool } from "./corpus.js";

/** Bump when the seeded pages or the way they are written change, so a stale cache is not reused. */
const SEED_VERSION = 2;
const BATCH = 5_000;

/** The seeded pages (scopes, links, bodies from real sentences), fixed by seed 11. */
export function* seedPages(count: number): Generator<PageWrite> {
  const random = createRandom(11);
  const pool = sentencePool();
  for (let i = 0; i < count; i++) {
    const sentences = Array.from(
      { length: 4 + Math.floor(random() * 8) },
      () => pool[Math.floor(random() * pool.length)],
    );
    yield preparePageWrite({
      scope: i % 10 === 0 ? "_global" : `project-${i % 7}`,
      path: `notes/${Math.floor(i / 1000)}/page-${i}`,
      body: `# Note ${i}\n\n${sentences.join(" ")}${i > 0 ? `\n\nSee [[notes/${Math.floor((i - 1) / 1000)}/page-${i - 1}]].` : ""}`,
      author: "bench",
    });
  }
}

/**
 * A memory store holding `count` seeded pages, written through the store's own write path (versions, edges,
 * generations as any write) 5,000 per transaction, and kept under the temp dir for later runs.
 */
export async function seededMemoryStore(
  count: number,
  options: { fresh?: boolean } = {},
): Promise<{ file: string; seeded: boolean; seconds: number }> {
  const dir = path.join(tmpdir(), "ivoai-bench-memory-cache");
  const file = path.join(dir, `pages-${count}-v${SEED_VERSION}.sqlite`);
  if (!options.fresh && (await stat(file).catch(() => undefined))) {
    // Opening applies any newer schema to the cache itself, so the timed start below never migrates.
    await (await openMemoryStore(file)).close();
    return { file, seeded: false, seconds: 0 };
  }
  await mkdir(dir, { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  const started = performance.now();
  const store = await openMemoryStore(partial);
  const at = new Date("2026-11-01T00:00:00.000Z").toISOString();
  let batch: PageWrite[] = [];
  for (const write of seedPages(count)) {
    batch.push(write);
    if (batch.length === BATCH) {
      await store.writePages(batch, at);
      batch = [];
    }
  }
  await store.writePages(batch, at);
  await store.close();
  await rename(partial, file);
  return { file, seeded: true, seconds: (performance.now() - started) / 1000 };
}
