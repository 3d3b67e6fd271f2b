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
  // First every score, in one tight loop (no closure, no allocation per row); then the selection.
  const scores = new Float64Array(rows);
  for (let row = 0, base = 0; row < rows; row++, base += dims) {
    let dot = 0;
    for (let d = 0; d < axes; d++) dot += (matrix[base + d] as number) * (query[d] as number);
    scores[row] = dot;
  }
  return selectTop(scores, k);
}

/** The `k` best (score, row) pairs, best first, ties by row: a min-heap on parallel arrays. */
function selectTop(scores: Float64Array, k: number): { row: number; score: number }[] {
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
