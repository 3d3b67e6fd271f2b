// Memory's vector side: every page (title and body) embedded by the context's model embedder (onnx, tei), the
// vectors kept in the memory database (page-vectors.ts, shared by replicas and carried by backups), caught up by
// the store's generation as the lexical index is (tombstones since, keys above the highest seen), and scanned
// exactly, one scope's rows at a time: a search costs the caller's scopes' pages, not every page the server holds.
// The first catch-up may embed every page: searches meanwhile use the pages embedded so far, each batch stored as
// it is done.
import type { Logger } from "../../shared/logger.js";
import type { Embedder } from "../context/embedder.js";
import { type StoredVector, toFormat, type VectorFormat } from "../context/vector-matrix.js";
import { inFormat, singleFlight, type VectorStanding, vectorIndexName } from "../context/vectors.js";
import type { MemoryStore, PageRecord } from "./store.js";
import { VectorRows } from "./vector-rows.js";

export interface MemoryVectors {
  readonly name: string;
  standing(): VectorStanding;
  /** Catches up with the store: embeds pages written since, drops removed ones (stored batch by batch). */
  refresh(): Promise<{ embedded: number; total: number }>;
  /** Page keys by similarity to `query`, best first, of pages in `scopes` only. */
  search(query: string, scopes: Iterable<string>, limit: number): Promise<{ key: number; score: number }[]>;
}

export type MemoryVectorFeed = Pick<
  MemoryStore,
  "generation" | "removedSince" | "pageKeysAfter" | "pagesByKeys" | "vectors"
>;

export interface MemoryVectorsDeps {
  store: MemoryVectorFeed;
  embedder: Embedder;
  logger: Logger;
  format?: VectorFormat;
  batchSize?: number;
}

/** Keys read per round of a catch-up. */
const PAGE = 10_000;
/** A long catch-up logs its progress every this many embedded pages. */
const PROGRESS_EVERY = 10_000;

/** What a page's vector is made of: its title, then its body. */
export function pageText(page: Pick<PageRecord, "title" | "body">): string {
  return page.title ? `${page.title}\n\n${page.body}` : page.body;
}

export function createMemoryVectors(deps: MemoryVectorsDeps): MemoryVectors {
  const { store, embedder, logger } = deps;
  const name = vectorIndexName(embedder, "memory");
  const dims = embedder.dims;
  const format = deps.format ?? "int8";
  const batchSize = deps.batchSize ?? 32;
  // Each scope's rows, in key order.
  const scopes = new Map<string, VectorRows>();
  const size = () => {
    let total = 0;
    for (const rows of scopes.values()) total += rows.size;
    return total;
  };
  /** The generation the rows hold (undefined: no catch-up has finished), and the one the walk started from. */
  let generation: number | undefined;
  let base: number | undefined;
  let maxKey = 0;
  /** Vectors the store held at the first catch-up, not yet matched with a page. */
  let stored: Map<string, StoredVector> | undefined;
  let embeddedSoFar = 0;

  const rowsOf = (scope: string) => {
    let rows = scopes.get(scope);
    if (!rows) {
      rows = new VectorRows(dims, format);
      scopes.set(scope, rows);
    }
    return rows;
  };

  const dropRemoved = async (since: number) => {
    const removed = new Set(await store.removedSince(since));
    let held = 0;
    for (const rows of scopes.values()) held += rows.remove(removed);
    if (held === 0) return;
    // Every tombstone since `since` (a row removed earlier again is a no-op in the table too).
    const dropped = [...removed].map(String);
    await store.vectors.update(name, dims, { added: new Map(), dropped, all: new Map() });
  };

  /** Appends a batch of pages (key order): stored vectors where the store has them, the rest embedded and stored. */
  const addBatch = async (batch: readonly { key: number; scope: string }[]) => {
    const missing = batch.filter((row) => !stored?.has(String(row.key)));
    const added = new Map<string, StoredVector>();
    if (missing.length > 0) {
      const pages = await store.pagesByKeys(missing.map((row) => row.key));
      // A page replaced since its key was read is embedded when its new key comes.
      const texts = missing.flatMap((row) => {
        const page = pages.get(row.key);
        return page ? [{ key: row.key, text: pageText(page) }] : [];
      });
      const embedded = await embedder.embed(
        texts.map((row) => row.text),
        "passage",
      );
      for (const [i, row] of texts.entries())
        added.set(String(row.key), toFormat(embedded[i] as Float32Array, format) as StoredVector);
      if (added.size > 0) await store.vectors.update(name, dims, { added, dropped: [], all: new Map() });
    }
    for (const row of batch) {
      const id = String(row.key);
      const vector = added.get(id) ?? stored?.get(id);
      stored?.delete(id);
      if (vector) rowsOf(row.scope).append(row.key, vector);
    }
    maxKey = Math.max(maxKey, batch.at(-1)?.key ?? maxKey);
    const before = embeddedSoFar;
    embeddedSoFar += added.size;
    if (Math.floor(embeddedSoFar / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY))
      logger.info("memory pages embedded", { index: name, embedded: embeddedSoFar, vectors: size() });
    return added.size;
  };

  const run = async () => {
    const current = await store.generation();
    if (current === generation) return { embedded: 0, total: size() };
    if (base === undefined) {
      // The first catch-up walks every live page: what the store holds is used, the rest embedded.
      base = current;
      stored = inFormat(await store.vectors.load(name, dims), format);
    } else {
      await dropRemoved(base);
    }
    let embedded = 0;
    for (;;) {
      const page = await store.pageKeysAfter(maxKey, PAGE);
      for (let i = 0; i < page.length; i += batchSize)
        embedded += await addBatch(page.slice(i, i + batchSize));
      if (page.length < PAGE) break;
    }
    if (stored) {
      // Vectors of pages gone before the walk (at or below the highest key it saw) are dropped from the store.
      const dead = [...stored.keys()].filter((id) => Number(id) <= maxKey);
      if (dead.length > 0)
        await store.vectors.update(name, dims, { added: new Map(), dropped: dead, all: new Map() });
      stored = undefined;
    }
    generation = current;
    base = current;
    return { embedded, total: size() };
  };
  const refresh = singleFlight(run);

  const search = (query: Float32Array, allowed: Iterable<string>, limit: number) => {
    const hits: { key: number; score: number }[] = [];
    for (const scope of new Set(allowed)) hits.push(...(scopes.get(scope)?.search(query, limit) ?? []));
    return hits.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, limit);
  };

  return {
    name,
    standing: () => ({ name, dims, format, vectors: generation === undefined ? undefined : size() }),
    refresh,
    async search(query, scopes, limit) {
      const pending = refresh();
      // Until the first catch-up ends (it may embed every page), search what is embedded so far.
      if (generation === undefined) {
        pending.catch((error: unknown) =>
          logger.warn("memory vectors could not catch up", { index: name, error: messageOf(error) }),
        );
      } else {
        await pending;
      }
      const [vector] = await embedder.embed([query], "query");
      return vector ? search(vector, scopes, limit) : [];
    },
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
