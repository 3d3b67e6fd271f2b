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
}

const PAGE = 20_000;

export function createSyncedIndex<Meta>(feed: IndexFeed<Meta>): SyncedIndex<Meta> {
  let index: LexicalIndex = createLexicalIndex();
  const metas = new Map<number, Meta>();
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
    } else {
      index = createLexicalIndex();
      metas.clear();
      maxKey = 0;
    }
    for (;;) {
      const rows = await feed.addedAfter(maxKey, PAGE);
      for (const row of rows) {
        index.add(row.key, row.terms.length > 0 ? row.terms.split(" ") : []);
        metas.set(row.key, row.meta);
        maxKey = row.key;
      }
      if (rows.length < PAGE) break;
    }
    const present = await feed.languages();
    languages = present.length > 0 ? present : ["en", "pt"];
    generation = current;
  };

  return {
    get size() {
      return index.size;
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
