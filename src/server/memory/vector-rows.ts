// The rows of one scope's page vectors, in page-key order: packed for the scan (vector-matrix.ts), then a short
// tail of rows added since (scored here in JavaScript) and tombstones of removed pages (left out by the row filter)
// until enough changed to repack. A page write costs the next search a few dot products, not a copy of every row.
import {
  isInt8Vector,
  packMatrix,
  type StoredVector,
  type VectorFormat,
  type VectorMatrix,
} from "../context/vector-matrix.js";
import { indexOfSorted } from "../retrieval/meta-table.js";

/** Row filter groups: 0 a live row, 1 a removed one (the filter allows group 0 only). */
const LIVE = 0;
const DEAD = 1;
const ALLOW_LIVE = Uint8Array.from([1, 0]);
/** Rows added, or removed, since the last pack that make the next search repack (at least; or 2 % / 5 %). */
const TAIL_ROWS = 512;

export class VectorRows {
  private keys: number[] = [];
  private groups: number[] = [];
  private vectors: StoredVector[] = [];
  /** Removed rows among the packed ones (the scan filters only when there are some). */
  private packedDead = 0;
  private matrix: VectorMatrix | undefined;
  private packedGroups = new Uint32Array(0);
  private packed = 0;
  private dead = 0;

  constructor(
    private readonly dims: number,
    private readonly format: VectorFormat,
  ) {}

  /** Live rows. */
  get size(): number {
    return this.keys.length - this.dead;
  }

  /** Adds a row; keys come in ascending order. */
  append(key: number, vector: StoredVector): void {
    this.keys.push(key);
    this.groups.push(LIVE);
    this.vectors.push(vector);
  }

  /** Marks the rows of these keys removed; how many were held. */
  remove(keys: ReadonlySet<number>): number {
    let removed = 0;
    for (const key of keys) {
      const row = this.rowOf(key);
      if (row === undefined || this.groups[row] === DEAD) continue;
      this.groups[row] = DEAD;
      if (row < this.packed) {
        this.packedGroups[row] = DEAD;
        this.packedDead += 1;
      }
      this.dead += 1;
      removed += 1;
    }
    return removed;
  }

  /** The best `limit` live rows' keys, best first (ties: lower key). */
  search(query: Float32Array, limit: number): { key: number; score: number }[] {
    const rows = this.keys.length;
    if (
      !this.matrix ||
      rows - this.packed > Math.max(TAIL_ROWS, rows / 50) ||
      this.dead > Math.max(TAIL_ROWS, rows / 20)
    )
      this.repack();
    const filter = this.packedDead > 0 ? { groups: this.packedGroups, allowed: ALLOW_LIVE } : undefined;
    const hits = (this.matrix as VectorMatrix)
      .search(query, limit, undefined, filter)
      .map((hit) => ({ key: this.keys[hit.row] as number, score: hit.score }));
    for (let row = this.packed; row < this.keys.length; row++) {
      if (this.groups[row] === DEAD) continue;
      hits.push({ key: this.keys[row] as number, score: dot(this.vectors[row] as StoredVector, query) });
    }
    return hits.sort((a, b) => b.score - a.score || a.key - b.key).slice(0, limit);
  }

  private repack(): void {
    if (this.dead > 0) {
      const live = (_: unknown, row: number) => this.groups[row] !== DEAD;
      this.keys = this.keys.filter(live);
      this.vectors = this.vectors.filter(live);
      this.groups = this.groups.filter((group) => group !== DEAD);
      this.dead = 0;
    }
    this.matrix = packMatrix(this.vectors, this.dims, this.format);
    this.packedGroups = Uint32Array.from(this.groups);
    this.packed = this.keys.length;
    this.packedDead = 0;
  }

  private rowOf(key: number): number | undefined {
    const row = indexOfSorted(this.keys, this.keys.length, key);
    return row < 0 ? undefined : row;
  }
}

function dot(vector: StoredVector, query: Float32Array): number {
  let sum = 0;
  if (isInt8Vector(vector)) {
    for (let d = 0; d < vector.values.length; d++) sum += (vector.values[d] as number) * (query[d] as number);
    return sum * vector.scale;
  }
  for (let d = 0; d < vector.length; d++) sum += (vector[d] as number) * (query[d] as number);
  return sum;
}
