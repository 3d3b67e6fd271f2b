// The exact vector scan's inner loop: dot products over a row-major matrix into one reused score array, and the
// best `limit` rows chosen with a bounded heap (no object per row, no sort of every row).

/**
 * Rows of `matrix` (rows × dims) with the highest dot product with `query`, best first, ties by row; over the
 * first `axes` of each row only when given.
 */
export function topRowsByDot(
  matrix: Float32Array,
  dims: number,
  query: Float32Array,
  limit: number,
  axes = dims,
): { row: number; score: number }[] {
  const rows = dims > 0 ? Math.floor(matrix.length / dims) : 0;
  const k = Math.min(limit, rows);
  if (k <= 0) return [];
  // A min-heap of (score, row) on parallel arrays: the root is the worst of the best k so far.
  const heapScore = new Float64Array(k);
  const heapRow = new Int32Array(k);
  let size = 0;
  const worse = (i: number, j: number) =>
    (heapScore[i] as number) < (heapScore[j] as number) ||
    ((heapScore[i] as number) === (heapScore[j] as number) &&
      (heapRow[i] as number) > (heapRow[j] as number));
  const swap = (i: number, j: number) => {
    const s = heapScore[i] as number;
    heapScore[i] = heapScore[j] as number;
    heapScore[j] = s;
    const r = heapRow[i] as number;
    heapRow[i] = heapRow[j] as number;
    heapRow[j] = r;
  };
  const down = (from: number) => {
    for (let i = from; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && worse(l, m)) m = l;
      if (r < size && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let row = 0, base = 0; row < rows; row++, base += dims) {
    let dot = 0;
    for (let d = 0; d < axes; d++) dot += (matrix[base + d] as number) * (query[d] as number);
    if (size < k) {
      heapScore[size] = dot;
      heapRow[size] = row;
      for (let i = size++; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (dot > (heapScore[0] as number)) {
      heapScore[0] = dot;
      heapRow[0] = row;
      down(0);
    }
  }
  const out: { row: number; score: number }[] = [];
  for (let i = 0; i < size; i++) out.push({ row: heapRow[i] as number, score: heapScore[i] as number });
  return out.sort((a, b) => b.score - a.score || a.row - b.row);
}

/**
 * Two-stage scan for vectors whose leading axes carry most of the energy (an LSA space, axes by singular value):
 * every row scored on the first `prefix` axes, the best `candidates` re-scored on all. Exact when candidates ≥ rows.
 */
export function topRowsByPrefixDot(
  matrix: Float32Array,
  dims: number,
  query: Float32Array,
  limit: number,
  options: { prefix: number; candidates: number },
): { row: number; score: number }[] {
  const rows = dims > 0 ? Math.floor(matrix.length / dims) : 0;
  const prefix = Math.min(options.prefix, dims);
  if (rows <= options.candidates || prefix >= dims) return topRowsByDot(matrix, dims, query, limit);
  return rescore(topRowsByDot(matrix, dims, query, options.candidates, prefix), matrix, dims, query, limit);
}

function rescore(
  picked: readonly { row: number }[],
  matrix: Float32Array,
  dims: number,
  query: Float32Array,
  limit: number,
): { row: number; score: number }[] {
  return picked
    .map(({ row }) => {
      let dot = 0;
      for (let d = 0, base = row * dims; d < dims; d++)
        dot += (matrix[base + d] as number) * (query[d] as number);
      return { row, score: dot };
    })
    .sort((a, b) => b.score - a.score || a.row - b.row)
    .slice(0, limit);
}
