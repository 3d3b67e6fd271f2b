// A lexical index kept in step with a store that other processes write: it reloads what changed since the
// store's last generation (added keys above the highest seen, tombstoned keys removed).
import type { Language } from "./analyzer.js";
import {
  createLexicalIndex,
  type LexicalHit,
  type LexicalIndex,
  type LexicalSearchOptions,
} from "./lexical-index.js";

/** What a store offers the index: a generation counter, tombstones since a generation, rows after a key. */
export interface IndexFeed<Meta> {
  generation(): Promise<number>;
  removedSince(generation: number): Promise<number[]>;
  /** Rows with key > `afterKey`, in key order, at most `limit`; `terms` space-separated. */
  addedAfter(afterKey: number, limit: number): Promise<{ key: number; terms: string; meta: Meta }[]>;
  /** Languages present, so an undecided query is stemmed only in those. */
  languages(): Promise<Language[]>;
}

export interface SyncedIndex<Meta> {
  /** Brings the index up to the store's current generation (concurrent callers share one refresh). */
  refresh(): Promise<void>;
  search(query: ReadonlyMap<string, number>, options: LexicalSearchOptions): LexicalHit[];
  meta(key: number): Meta | undefined;
  languages(): Language[];
  readonly size: number;
  /** Removed passages still holding memory until the next rebuild. */
  readonly dead: number;
}

const PAGE = 20_000;

export function createSyncedIndex<Meta>(feed: IndexFeed<Meta>): SyncedIndex<Meta> {
  let index: LexicalIndex = createLexicalIndex();
  let metas = new Map<number, Meta>();
  let generation = -1;
  let maxKey = 0;
  let languages: Language[] = ["en", "pt"];
  let refreshing: Promise<void> | undefined;

  const load = async () => {
    const current = await feed.generation();
    if (current === generation) return;
    if (generation >= 0) {
      for (const key of await feed.removedSince(generation)) {
        index.remove(key);
        metas.delete(key);
      }
    }
    // Removed passages keep their postings until a rebuild: rebuild once they outnumber the live ones.
    // A rebuild fills a fresh index and swaps it in at the end, so searches meanwhile see the old one.
    const rebuild = generation < 0 || index.dead > Math.max(10_000, index.size);
    const target = rebuild ? createLexicalIndex() : index;
    const targetMetas = rebuild ? new Map<number, Meta>() : metas;
    let after = rebuild ? 0 : maxKey;
    for (;;) {
      const rows = await feed.addedAfter(after, PAGE);
      for (const row of rows) {
        target.add(row.key, row.terms.length > 0 ? row.terms.split(" ") : []);
        targetMetas.set(row.key, row.meta);
        after = row.key;
      }
      if (rows.length < PAGE) break;
    }
    index = target;
    metas = targetMetas;
    maxKey = after;
    const present = await feed.languages();
    languages = present.length > 0 ? present : ["en", "pt"];
    generation = current;
  };

  return {
    get size() {
      return index.size;
    },
    get dead() {
      return index.dead;
    },
    refresh() {
      refreshing ??= load().finally(() => {
        refreshing = undefined;
      });
      return refreshing;
    },
    search: (query, options) => index.search(query, options),
    meta: (key) => metas.get(key),
    languages: () => languages,
  };
}
