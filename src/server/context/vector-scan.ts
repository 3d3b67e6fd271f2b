// The exact vector scan's inner loop: dot products over a row-major matrix (float32, or int8 with one scale per row)
// into one score array, and the best `limit` rows chosen with a bounded heap (no object per row, no sort of every
// row). A two-stage variant scores every row on its leading axes first, for spaces whose leading axes carry most of
// the energy (the corpus embedder's LSA axes, ordered by singular value).

export interface ScoredRow {
  row: number;
  score: number;
}

/** Rows × dims, row-major; int8 rows carry one scale each (value ≈ q × scale). */
export interface PackedRows {
  readonly values: Float32Array | Int8Array;
  readonly scales?: Float32Array;
  readonly dims: number;
}

export interface PrefixScan {
  /** Axes scored for every row. */
  prefix: number;
  /** Rows re-scored on every axis; the scan is exact when this covers every row. */
  candidates: number;
}

/** Rows by group (a scope's number), and the groups a search may return. */
export interface RowFilter {
  readonly groups: ArrayLike<number>;
  readonly allowed: Uint8Array;
}

/** Scores of rows the filter excludes become -Infinity (so a selection of the best ends with them). */
export function maskScores(scores: Float32Array | Float64Array, filter: RowFilter | undefined): void {
  if (!filter) return;
  const { groups, allowed } = filter;
  for (let row = 0; row < scores.length; row++)
    if (allowed[groups[row] as number] !== 1) scores[row] = Number.NEGATIVE_INFINITY;
}

/** A selection without the rows a filter excluded (asked for more rows than it lets through). */
export function withoutMasked(rows: ScoredRow[]): ScoredRow[] {
  return rows.filter((hit) => hit.score !== Number.NEGATIVE_INFINITY);
}

export function rowCount(packed: PackedRows): number {
  return packed.dims > 0 ? Math.floor(packed.values.length / packed.dims) : 0;
}

/** The best `limit` rows by dot product with `query`, best first, ties by lower row. */
export function topRows(
  packed: PackedRows,
  query: Float32Array,
  limit: number,
  scan?: PrefixScan,
  filter?: RowFilter,
): ScoredRow[] {
  const rows = rowCount(packed);
  const prefix = scan ? Math.min(scan.prefix, packed.dims) : packed.dims;
  const scored = (axes: number) => {
    const scores = scoreRows(packed, query, axes);
    maskScores(scores, filter);
    return scores;
  };
  if (!scan || rows <= scan.candidates || prefix >= packed.dims)
    return withoutMasked(selectTop(scored(packed.dims), Math.min(limit, rows)));
  const picked = withoutMasked(selectTop(scored(prefix), Math.min(scan.candidates, rows)));
  return picked
    .map(({ row }) => ({ row, score: dotRow(packed, row, query) }))
    .sort((a, b) => b.score - a.score || a.row - b.row)
    .slice(0, limit);
}

/** Every row's dot product over its first `axes` axes, in one tight loop per format. */
function scoreRows(packed: PackedRows, query: Float32Array, axes: number): Float64Array {
  const { values, scales, dims } = packed;
  const rows = rowCount(packed);
  const scores = new Float64Array(rows);
  for (let row = 0, base = 0; row < rows; row++, base += dims) {
    let dot = 0;
    for (let d = 0; d < axes; d++) dot += (values[base + d] as number) * (query[d] as number);
    scores[row] = scales ? dot * (scales[row] as number) : dot;
  }
  return scores;
}

function dotRow(packed: PackedRows, row: number, query: Float32Array): number {
  const { values, scales, dims } = packed;
  let dot = 0;
  for (let d = 0, base = row * dims; d < dims; d++)
    dot += (values[base + d] as number) * (query[d] as number);
  return scales ? dot * (scales[row] as number) : dot;
}

/** The `k` best (score, row) pairs, best first, ties by row: a min-heap on parallel arrays. */
export function selectTop(scores: Float64Array, k: number): ScoredRow[] {
  if (k <= 0) return [];
  const heapScore = new Float64Array(k);
  const heapRow = new Int32Array(k);
  let size = 0;
  for (let row = 0; row < scores.length; row++) {
    const score = scores[row] as number;
    let i: number;
    if (size < k) {
      i = size++;
      // Sift up.
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const ps = heapScore[parent] as number;
        if (ps < score || (ps === score && (heapRow[parent] as number) > row)) break;
        heapScore[i] = ps;
        heapRow[i] = heapRow[parent] as number;
        i = parent;
      }
      heapScore[i] = score;
      heapRow[i] = row;
      continue;
    }
    // Rows come in order, so an equal score never displaces the root (its row is smaller).
    if (!(score > (heapScore[0] as number))) continue;
    i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      let m = l;
      if (
        r < size &&
        ((heapScore[r] as number) < (heapScore[l] as number) ||
          ((heapScore[r] as number) === (heapScore[l] as number) &&
            (heapRow[r] as number) > (heapRow[l] as number)))
      )
        m = r;
      const ms = heapScore[m] as number;
      if (score < ms || (score === ms && row > (heapRow[m] as number))) break;
      heapScore[i] = ms;
      heapRow[i] = heapRow[m] as number;
      i = m;
    }
    heapScore[i] = score;
    heapRow[i] = row;
  }
  const out: ScoredRow[] = [];
  for (let i = 0; i < size; i++) out.push({ row: heapRow[i] as number, score: heapScore[i] as number });
  return out.sort((a, b) => b.score - a.score || a.row - b.row);
}
