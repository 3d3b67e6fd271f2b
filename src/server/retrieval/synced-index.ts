// A lexical index kept in step with a store that other processes write: it reloads what changed since the
// store's last generation (added keys above the highest seen, tombstoned keys removed). With a snapshot file it
// starts from the last snapshot and catches up from there, and writes a fresh snapshot once enough changed.
import type { Language } from "./analyzer.js";
import { readIndexSnapshot, writeIndexSnapshot } from "./index-snapshot.js";
import {
  createLexicalIndex,
  DEFAULT_LEXICAL_PARAMS,
  type LexicalHit,
  type LexicalIndex,
  type LexicalParams,
  type LexicalSearchOptions,
} from "./lexical-index.js";

/** What a store offers the index: a generation counter, tombstones since a generation, rows after a key. */
export interface IndexFeed<Meta> {
  generation(): Promise<number>;
  removedSince(generation: number): Promise<number[]>;
  /** Rows with key > `afterKey`, in key order, at most `limit`; `terms` space-separated. */
  addedAfter(
    afterKey: number,
    limit: number,
  ): Promise<{ key: number; terms: string; meta: Meta; group?: number }[]>;
  /** Languages present, so an undecided query is stemmed only in those. */
  languages(): Promise<Language[]>;
  /** The store's identity, which a snapshot must match (required for snapshots). */
  instance?(): Promise<string | undefined>;
  /** How many rows the store holds, to check a caught-up snapshot against (required for snapshots). */
  count?(): Promise<number>;
}

export interface SyncedIndexOptions {
  /** The ranking parameters (default DEFAULT_LEXICAL_PARAMS). */
  params?: LexicalParams;
  /** Where the index persists itself; without it every start reads the whole store. */
  snapshotFile?: string;
  /** A snapshot that could not be used or written (the index falls back to the store; nothing is lost). */
  onSnapshotProblem?: (message: string) => void;
  /**
   * Rows changed since the last snapshot that make the next refresh write one (default max(1000, 5 % of size));
   * `Infinity` for an index that only reads the snapshot (a short-lived CLI process), written by `persist()` only.
   */
  snapshotAfterChanges?: number;
  /**
   * Tells whether the store may have changed (PostgreSQL notifications): without a change the refresh does not
   * ask the store for its generation. It must answer true whenever it cannot tell.
   */
  changes?: { takeChanged(): boolean };
}

export interface SyncedIndex<Meta> {
  /** Brings the index up to the store's current generation (concurrent callers share one refresh). */
  refresh(): Promise<void>;
  /** Writes the snapshot now (after any refresh in flight); a no-op without a snapshot file. */
  persist(): Promise<void>;
  search(query: ReadonlyMap<string, number>, options: LexicalSearchOptions): LexicalHit[];
  windowScores(
    query: ReadonlyMap<string, number>,
    windows: readonly (readonly number[])[],
    weights?: readonly (readonly number[])[],
  ): number[];
  meta(key: number): Meta | undefined;
  /**
   * The nearest live keys before and after `key` (at most `count` each side, nearest first) whose metadata
   * `belongs` accepts, looking at no more than `scan` keys each side: e.g. the turns around one in a conversation.
   */
  around(
    key: number,
    count: number,
    belongs: (meta: Meta) => boolean,
    scan?: number,
  ): { key: number; distance: number }[];
  languages(): Language[];
  readonly size: number;
  /** Removed passages still holding memory until the next rebuild. */
  readonly dead: number;
}

const PAGE = 20_000;

/** Per key (ascending), an index into a table of distinct metadata: consecutive rows of one document share one. */
class MetaTable<Meta> {
  keys = new Float64Array(1024);
  ids = new Int32Array(1024);
  length = 0;
  values: Meta[] = [];
  push(key: number, meta: Meta): void {
    if (this.length === this.keys.length) {
      // At least 1024: a table restored from the snapshot of an empty index has no room at all.
      const capacity = Math.max(1024, this.length * 2);
      const keys = new Float64Array(capacity);
      keys.set(this.keys);
      this.keys = keys;
      const ids = new Int32Array(capacity);
      ids.set(this.ids);
      this.ids = ids;
    }
    const last = this.values.at(-1);
    if (last === undefined || !sameMeta(last, meta)) this.values.push(meta);
    this.keys[this.length] = key;
    this.ids[this.length++] = this.values.length - 1;
  }
  get(key: number): Meta | undefined {
    const at = this.indexOf(key);
    return at < 0 ? undefined : this.values[this.ids[at] as number];
  }
  /** The row of `key`, or -1. */
  indexOf(key: number): number {
    let low = 0;
    let high = this.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const found = this.keys[middle] as number;
      if (found === key) return middle;
      if (found < key) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

function sameMeta(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const left = Object.entries(a);
  if (left.length !== Object.keys(b).length) return false;
  return left.every(([name, value]) => (b as Record<string, unknown>)[name] === value);
}

export function createSyncedIndex<Meta>(
  feed: IndexFeed<Meta>,
  options: SyncedIndexOptions = {},
): SyncedIndex<Meta> {
  const params = options.params ?? DEFAULT_LEXICAL_PARAMS;
  let index: LexicalIndex = createLexicalIndex(params);
  let metas = new MetaTable<Meta>();
  let generation = -1;
  let maxKey = 0;
  let languages: Language[] = ["en", "pt"];
  let refreshing: Promise<void> | undefined;
  /** The generation the snapshot file holds (undefined: unknown). */
  let writtenGeneration: number | undefined;
  let changedSinceSnapshot = 0;
  const snapshotFile = options.snapshotFile;
  const problem = (message: string) => options.onSnapshotProblem?.(message);

  /** The snapshot, if it is of this store and not ahead of it; `generation`/`maxKey` then come from it. */
  const restore = async (current: number): Promise<boolean> => {
    if (!snapshotFile || !feed.instance || !feed.count) return false;
    let read: Awaited<ReturnType<typeof readIndexSnapshot>>;
    try {
      read = await readIndexSnapshot(snapshotFile);
    } catch (error) {
      // Unreadable (permissions, I/O): the store still has everything.
      problem(`index snapshot not used (${error instanceof Error ? error.message : String(error)})`);
      return false;
    }
    if (!read.ok) {
      if (read.reason !== "absent") problem(`index snapshot not used (${read.reason}: ${read.detail})`);
      return false;
    }
    const { snapshot } = read;
    const instance = await feed.instance();
    if (instance === undefined || snapshot.instance !== instance || snapshot.generation > current) {
      problem("index snapshot not used (stale: taken of another catalogue or a later generation)");
      return false;
    }
    index = createLexicalIndex(params, snapshot.state);
    const table = new MetaTable<Meta>();
    table.keys = snapshot.metaKeys.slice();
    table.ids = snapshot.metaIds.slice();
    table.length = snapshot.metaKeys.length;
    table.values = snapshot.metas as Meta[];
    metas = table;
    generation = snapshot.generation;
    maxKey = snapshot.maxKey;
    writtenGeneration = snapshot.generation;
    return true;
  };

  const catchUp = async (rebuild: boolean) => {
    // A rebuild fills a fresh index and swaps it in at the end, so searches meanwhile see the old one.
    const target = rebuild ? createLexicalIndex(params) : index;
    const targetMetas = rebuild ? new MetaTable<Meta>() : metas;
    let after = rebuild ? 0 : maxKey;
    let added = 0;
    for (;;) {
      const rows = await feed.addedAfter(after, PAGE);
      for (const row of rows) {
        target.addText(row.key, row.terms, row.group);
        targetMetas.push(row.key, row.meta);
        after = row.key;
      }
      added += rows.length;
      if (rows.length < PAGE) break;
    }
    if (rebuild) target.compact();
    index = target;
    metas = targetMetas;
    maxKey = after;
    return added;
  };

  const load = async () => {
    const current = await feed.generation();
    if (current === generation) return;
    let changed = 0;
    const restored = generation < 0 && (await restore(current));
    if (generation >= 0) {
      for (const key of await feed.removedSince(generation)) if (index.remove(key)) changed += 1;
    }
    // Removed passages keep their postings until a rebuild: rebuild once they outnumber the live ones.
    let rebuilt = generation < 0 || index.dead > Math.max(10_000, index.size);
    changed += await catchUp(rebuilt);
    if (restored && feed.count) {
      // Tombstones are pruned after a while: a snapshot older than the oldest kept one misses removals.
      const count = await feed.count();
      if (count !== index.size && (await feed.generation()) === current) {
        problem(
          `index snapshot not used (stale: ${index.size} passages after catching up, store has ${count})`,
        );
        changed += await catchUp(true);
        rebuilt = true;
        writtenGeneration = undefined;
      }
    }
    const present = await feed.languages();
    languages = present.length > 0 ? present : ["en", "pt"];
    generation = current;
    changedSinceSnapshot += rebuilt ? Number.POSITIVE_INFINITY : changed;
  };

  const write = async () => {
    if (!snapshotFile || !feed.instance || generation < 0 || generation === writtenGeneration) return;
    const instance = await feed.instance();
    if (instance === undefined) return;
    // Taken synchronously: the arrays later refreshes change are copies, the rest is never mutated.
    const snapshot = {
      generation,
      maxKey,
      instance,
      state: index.state(),
      metaKeys: metas.keys.slice(0, metas.length),
      metaIds: metas.ids.slice(0, metas.length),
      metas: metas.values.slice(),
    };
    changedSinceSnapshot = 0;
    await writeIndexSnapshot(snapshotFile, snapshot);
    writtenGeneration = snapshot.generation;
  };

  let writes = Promise.resolve();
  let writing = 0;
  const persist = (): Promise<void> => {
    const run = async () => {
      await refreshing;
      await write();
    };
    writing += 1;
    const next = writes.then(run).finally(() => {
      writing -= 1;
    });
    writes = next.catch(() => undefined);
    return next;
  };

  const refresh = () => {
    // Taken before the generation is read, so a change committed after that read is signalled again.
    if (!refreshing && generation >= 0 && options.changes && !options.changes.takeChanged())
      return Promise.resolve();
    refreshing ??= load().finally(() => {
      refreshing = undefined;
    });
    return refreshing.then(() => {
      const threshold = options.snapshotAfterChanges ?? Math.max(1000, index.size / 20);
      // An infinite threshold never writes by itself (a rebuild counts as infinitely many changes).
      if (snapshotFile && writing === 0 && Number.isFinite(threshold) && changedSinceSnapshot >= threshold) {
        persist().catch((error: unknown) =>
          problem(`index snapshot not written: ${error instanceof Error ? error.message : String(error)}`),
        );
      }
    });
  };

  return {
    get size() {
      return index.size;
    },
    get dead() {
      return index.dead;
    },
    refresh,
    persist,
    search: (query, searchOptions) => index.search(query, searchOptions),
    windowScores: (query, windows, weights) => index.windowScores(query, windows, weights),
    meta: (key) => (index.has(key) ? metas.get(key) : undefined),
    around(key, count, belongs, scan = 64) {
      const at = metas.indexOf(key);
      const found: { key: number; distance: number }[] = [];
      if (at < 0) return found;
      for (const step of [-1, 1]) {
        let distance = 0;
        for (
          let row = at + step, seen = 0;
          row >= 0 && row < metas.length && seen < scan;
          row += step, seen++
        ) {
          const other = metas.keys[row] as number;
          if (!index.has(other) || !belongs(metas.values[metas.ids[row] as number] as Meta)) continue;
          found.push({ key: other, distance: ++distance });
          if (distance === count) break;
        }
      }
      return found;
    },
    languages: () => languages,
  };
}
