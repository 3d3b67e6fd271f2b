// A lexical index kept in step with a store that other processes write: it reloads what changed since the
// store's last generation (added keys above the highest seen, tombstoned keys removed). With a snapshot file it
// starts from the last snapshot and catches up from there, and writes a fresh snapshot once enough changed.
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Language } from "./analyzer.js";
import {
  type IndexSnapshot,
  readIndexSnapshot,
  type SnapshotRead,
  writeIndexSnapshot,
} from "./index-snapshot.js";
import {
  createLexicalIndex,
  DEFAULT_LEXICAL_PARAMS,
  type LexicalHit,
  type LexicalIndex,
  type LexicalParams,
  type LexicalSearchOptions,
} from "./lexical-index.js";
import { MetaTable, metaTableOf } from "./meta-table.js";

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
  /**
   * Told the distinct metadata of a snapshot about to be restored, before any row is added after it; false when
   * it is not metadata of this feed (the snapshot is then not used: a checksum vouches for bytes, not shapes).
   */
  restored?(metas: readonly unknown[]): boolean;
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
/** Rows added between two turns of the event loop during a catch-up (~20 ms of work). */
const YIELD_EVERY = 500;

/** Everything a synced index holds: its feed and options, and the state refreshes and snapshot writes change. */
interface SyncedState<Meta> {
  readonly feed: IndexFeed<Meta>;
  readonly options: SyncedIndexOptions;
  readonly params: LexicalParams;
  index: LexicalIndex;
  metas: MetaTable<Meta>;
  /** The store generation the index holds (-1: nothing loaded yet). */
  generation: number;
  /** The highest key loaded: the next catch-up asks for rows after it. */
  maxKey: number;
  languages: Language[];
  /** The refresh under way, which concurrent callers share. */
  refreshing: Promise<void> | undefined;
  /** The generation the snapshot file holds (undefined: unknown). */
  writtenGeneration: number | undefined;
  changedSinceSnapshot: number;
  /** The chain of snapshot writes (one at a time), and how many are queued or running. */
  writes: Promise<void>;
  writing: number;
}

export function createSyncedIndex<Meta>(
  feed: IndexFeed<Meta>,
  options: SyncedIndexOptions = {},
): SyncedIndex<Meta> {
  const params = options.params ?? DEFAULT_LEXICAL_PARAMS;
  const state: SyncedState<Meta> = {
    feed,
    options,
    params,
    index: createLexicalIndex(params),
    metas: new MetaTable<Meta>(),
    generation: -1,
    maxKey: 0,
    languages: ["en", "pt"],
    refreshing: undefined,
    writtenGeneration: undefined,
    changedSinceSnapshot: 0,
    writes: Promise.resolve(),
    writing: 0,
  };
  return {
    get size() {
      return state.index.size;
    },
    get dead() {
      return state.index.dead;
    },
    refresh: () => refresh(state),
    persist: () => persist(state),
    search: (query, searchOptions) => state.index.search(query, searchOptions),
    windowScores: (query, windows, weights) => state.index.windowScores(query, windows, weights),
    meta: (key) => (state.index.has(key) ? state.metas.get(key) : undefined),
    around: (key, count, belongs, scan = 64) => around(state, key, count, belongs, scan),
    languages: () => state.languages,
  };
}

function problem(state: SyncedState<unknown>, message: string): void {
  state.options.onSnapshotProblem?.(message);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Brings the index up to the store's generation, then writes a snapshot if enough changed. */
function refresh<Meta>(state: SyncedState<Meta>): Promise<void> {
  const { changes } = state.options;
  // Taken before the generation is read, so a change committed after that read is signalled again.
  if (!state.refreshing && state.generation >= 0 && changes && !changes.takeChanged())
    return Promise.resolve();
  state.refreshing ??= load(state).finally(() => {
    state.refreshing = undefined;
  });
  return state.refreshing.then(() => persistIfChanged(state));
}

/** Starts a snapshot write (not awaited) once the changes since the last reach the threshold. */
function persistIfChanged<Meta>(state: SyncedState<Meta>): void {
  const threshold = state.options.snapshotAfterChanges ?? Math.max(1000, state.index.size / 20);
  // An infinite threshold never writes by itself (a rebuild counts as infinitely many changes).
  if (
    state.options.snapshotFile &&
    state.writing === 0 &&
    Number.isFinite(threshold) &&
    state.changedSinceSnapshot >= threshold
  ) {
    persist(state).catch((error: unknown) =>
      problem(state, `index snapshot not written: ${errorText(error)}`),
    );
  }
}

/** Queues a snapshot write after any refresh in flight; writes run one at a time. */
function persist<Meta>(state: SyncedState<Meta>): Promise<void> {
  const run = async () => {
    await state.refreshing;
    await writeSnapshot(state);
  };
  state.writing += 1;
  const next = state.writes.then(run).finally(() => {
    state.writing -= 1;
  });
  state.writes = next.catch(() => undefined);
  return next;
}

/** Loads what changed since the index's generation: from the snapshot first if nothing is loaded yet. */
async function load<Meta>(state: SyncedState<Meta>): Promise<void> {
  const { feed } = state;
  const current = await feed.generation();
  if (current === state.generation) return;
  let changed = 0;
  const restored = state.generation < 0 && (await restoreSnapshot(state, current));
  if (state.generation >= 0) {
    for (const key of await feed.removedSince(state.generation)) if (state.index.remove(key)) changed += 1;
  }
  // Removed passages keep their postings until a rebuild: rebuild once they outnumber the live ones.
  let rebuilt = state.generation < 0 || state.index.dead > Math.max(10_000, state.index.size);
  changed += await catchUp(state, rebuilt);
  if (restored && (await restoredIsStale(state, current))) {
    changed += await catchUp(state, true);
    rebuilt = true;
    state.writtenGeneration = undefined;
  }
  const present = await feed.languages();
  state.languages = present.length > 0 ? present : ["en", "pt"];
  state.generation = current;
  state.changedSinceSnapshot += rebuilt ? Number.POSITIVE_INFINITY : changed;
}

/**
 * Whether a restored and caught-up index misses removals (its size is not the store's while the store stood
 * still): tombstones are pruned after a while, so a snapshot older than the oldest kept one misses some.
 */
async function restoredIsStale<Meta>(state: SyncedState<Meta>, current: number): Promise<boolean> {
  const { feed, index } = state;
  if (!feed.count) return false;
  const count = await feed.count();
  if (count === index.size || (await feed.generation()) !== current) return false;
  problem(
    state,
    `index snapshot not used (stale: ${index.size} passages after catching up, store has ${count})`,
  );
  return true;
}

/** Adds the store's rows after `maxKey` (all rows into a fresh index when rebuilding); returns how many. */
async function catchUp<Meta>(state: SyncedState<Meta>, rebuild: boolean): Promise<number> {
  // A rebuild fills a fresh index and swaps it in at the end, so searches meanwhile see the old one.
  const target = rebuild ? createLexicalIndex(state.params, undefined, { bulk: true }) : state.index;
  const targetMetas = rebuild ? new MetaTable<Meta>() : state.metas;
  let after = rebuild ? 0 : state.maxKey;
  let added = 0;
  for (;;) {
    const rows = await state.feed.addedAfter(after, PAGE);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as (typeof rows)[number];
      target.addText(row.key, row.terms, row.group);
      targetMetas.push(row.key, row.meta);
      after = row.key;
      // A store read synchronously (SQLite) resolves without a turn of the event loop: give other requests one
      // now and then, so that a long catch-up (a memory index loading at start) does not hold the process.
      if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToEventLoop();
    }
    added += rows.length;
    if (rows.length < PAGE) break;
  }
  if (rebuild) target.compact();
  state.index = target;
  state.metas = targetMetas;
  state.maxKey = after;
  return added;
}

/** Takes the snapshot if it is of this store and not ahead of it (`generation`/`maxKey` then come from it). */
async function restoreSnapshot<Meta>(state: SyncedState<Meta>, current: number): Promise<boolean> {
  const snapshot = await usableSnapshot(state, current);
  if (!snapshot) return false;
  if (state.feed.restored && !state.feed.restored(snapshot.metas)) {
    problem(state, "index snapshot not used (corrupt: metadata of another shape)");
    return false;
  }
  state.index = createLexicalIndex(state.params, snapshot.state);
  state.metas = metaTableOf<Meta>(snapshot);
  state.generation = snapshot.generation;
  state.maxKey = snapshot.maxKey;
  state.writtenGeneration = snapshot.generation;
  return true;
}

/** The snapshot file's content if this store can use it; a problem reported for any but an absent file. */
async function usableSnapshot(
  state: SyncedState<unknown>,
  current: number,
): Promise<IndexSnapshot | undefined> {
  const { feed } = state;
  const file = state.options.snapshotFile;
  if (!file || !feed.instance || !feed.count) return undefined;
  let read: SnapshotRead;
  try {
    read = await readIndexSnapshot(file);
  } catch (error) {
    // Unreadable (permissions, I/O): the store still has everything.
    problem(state, `index snapshot not used (${errorText(error)})`);
    return undefined;
  }
  if (!read.ok) {
    if (read.reason !== "absent") problem(state, `index snapshot not used (${read.reason}: ${read.detail})`);
    return undefined;
  }
  const instance = await feed.instance();
  if (instance === undefined || read.snapshot.instance !== instance || read.snapshot.generation > current) {
    problem(state, "index snapshot not used (stale: taken of another catalogue or a later generation)");
    return undefined;
  }
  return read.snapshot;
}

/** Writes the snapshot file unless it already holds this generation (or there is nothing to write). */
async function writeSnapshot<Meta>(state: SyncedState<Meta>): Promise<void> {
  const { feed, generation } = state;
  const file = state.options.snapshotFile;
  if (!file || !feed.instance || generation < 0 || generation === state.writtenGeneration) return;
  const instance = await feed.instance();
  if (instance === undefined) return;
  const { metas } = state;
  // Taken synchronously: the arrays later refreshes change are copies, the rest is never mutated.
  const snapshot = {
    generation,
    maxKey: state.maxKey,
    instance,
    state: state.index.state(),
    metaKeys: metas.keys.slice(0, metas.length),
    ...distinctMetas(metas),
  };
  state.changedSinceSnapshot = 0;
  await writeIndexSnapshot(file, snapshot);
  state.writtenGeneration = snapshot.generation;
}

/** See `SyncedIndex.around`. */
function around<Meta>(
  state: SyncedState<Meta>,
  key: number,
  count: number,
  belongs: (meta: Meta) => boolean,
  scan: number,
): { key: number; distance: number }[] {
  const { metas, index } = state;
  const at = metas.indexOf(key);
  const found: { key: number; distance: number }[] = [];
  if (at < 0) return found;
  for (const step of [-1, 1]) {
    let distance = 0;
    for (let row = at + step, seen = 0; row >= 0 && row < metas.length && seen < scan; row += step, seen++) {
      const other = metas.keys[row] as number;
      if (!index.has(other) || !belongs(metas.at(row))) continue;
      found.push({ key: other, distance: ++distance });
      if (distance === count) break;
    }
  }
  return found;
}

/**
 * The table's metadata with each object once: the table shares an entry only between consecutive rows, while a
 * feed may hand the same object to rows far apart (memory's pages of one scope and session, interleaved with
 * others': 500,000 entries of a few thousand objects, which the snapshot's header would otherwise spell out).
 */
function distinctMetas<Meta>(metas: MetaTable<Meta>): { metaIds: Int32Array; metas: Meta[] } {
  const position = new Map<Meta, number>();
  const values: Meta[] = [];
  const ids = new Int32Array(metas.length);
  for (let row = 0; row < metas.length; row++) {
    const value = metas.at(row);
    let id = position.get(value);
    if (id === undefined) {
      id = values.length;
      position.set(value, id);
      values.push(value);
    }
    ids[row] = id;
  }
  return { metaIds: ids, metas: values };
}
