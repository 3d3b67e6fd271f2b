// The synced index's metadata per passage key, kept compact: consecutive rows of one document share one entry.

/** Per key (ascending), an index into a table of distinct metadata. */
export class MetaTable<Meta> {
  keys: Float64Array = new Float64Array(1024);
  ids: Int32Array = new Int32Array(1024);
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
  /** The metadata of row `row` (0 ≤ row < length). */
  at(row: number): Meta {
    return this.values[this.ids[row] as number] as Meta;
  }
  /** The row of `key`, or -1. */
  indexOf(key: number): number {
    return indexOfSorted(this.keys, this.length, key);
  }
}

/** Where `key` is among the first `length` of ascending `keys` (binary search), or -1. */
export function indexOfSorted(keys: ArrayLike<number>, length: number, key: number): number {
  let low = 0;
  let high = length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const found = keys[middle] as number;
    if (found === key) return middle;
    if (found < key) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** A table over a snapshot's arrays, kept as they are (they are full: the next push moves them into larger ones). */
export function metaTableOf<Meta>(snapshot: {
  metaKeys: Float64Array;
  metaIds: Int32Array;
  metas: unknown[];
}): MetaTable<Meta> {
  const table = new MetaTable<Meta>();
  table.keys = snapshot.metaKeys;
  table.ids = snapshot.metaIds;
  table.length = snapshot.metaKeys.length;
  table.values = snapshot.metas as Meta[];
  return table;
}

/** Shallow equality of two metadata records (same own keys, identical values). */
export function sameMeta(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const left = Object.entries(a);
  if (left.length !== Object.keys(b).length) return false;
  return left.every(([name, value]) => (b as Record<string, unknown>)[name] === value);
}
