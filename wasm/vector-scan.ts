// AssemblyScript (compiled to WebAssembly with SIMD by scripts/build-wasm.mjs): the exact vector scan's kernels.
// Rows are float32, row-major, `stride` floats apart (a multiple of 4; padding is zero), kept in this module's
// memory by src/server/context/vector-wasm.ts, which drives it; vector-scan.ts's JavaScript scan is its reference.
// Scores are accumulated in float32 lanes; the selection keeps the best `k` by score, ties by the lower row.

/** The next free byte; memory is only ever added to (one instance holds one matrix and its scratch space). */
let top: usize = 0;
/** Never handed out: 0 means "no memory" to the host. */
const FIRST: usize = 16;

/** `bytes` of fresh memory, 16-byte aligned, grown as needed; 0 when the runtime refuses to grow. */
export function reserve(bytes: usize): usize {
  if (top === 0) top = max<usize>((<usize>memory.size()) << 16, FIRST);
  const start = (top + 15) & ~(<usize>15);
  const end = start + bytes;
  const have = (<usize>memory.size()) << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) return 0;
  }
  top = end;
  return start;
}

/** The dot product of `axisBytes` / 4 floats at `row` and at `query` (a multiple of four), four lanes at a time. */
function dot(row: usize, query: usize, axisBytes: usize): f32 {
  let sum = f32x4.splat(0);
  for (let a: usize = 0; a < axisBytes; a += 16)
    sum = f32x4.add(sum, f32x4.mul(v128.load(row + a), v128.load(query + a)));
  return (
    f32x4.extract_lane(sum, 0) +
    f32x4.extract_lane(sum, 1) +
    f32x4.extract_lane(sum, 2) +
    f32x4.extract_lane(sum, 3)
  );
}

/** out[r] = dot(row r's first `axes` floats, query) for every row; axes a multiple of 4. */
export function dots(matrix: usize, rows: i32, stride: i32, axes: i32, query: usize, out: usize): void {
  const rowBytes = (<usize>stride) << 2;
  const axisBytes = (<usize>axes) << 2;
  let base = matrix;
  for (let row = 0; row < rows; row++) {
    store<f32>(out + ((<usize>row) << 2), dot(base, query, axisBytes));
    base += rowBytes;
  }
}

/**
 * out[r] = dot(row r's first `axes` int8 values, query) × scales[r] × queryScale for every row: rows `stride` bytes
 * apart, the query as int16 (|q| ≤ 8191, so the int32 sums cannot overflow below 2,048 axes); axes a multiple of 16.
 */
export function dotsI8(
  matrix: usize,
  rows: i32,
  stride: i32,
  axes: i32,
  query: usize,
  scales: usize,
  queryScale: f32,
  out: usize,
): void {
  let base = matrix;
  const rowBytes = <usize>stride;
  const axisBytes = <usize>axes;
  for (let row = 0; row < rows; row++) {
    let sum = i32x4.splat(0);
    for (let a: usize = 0; a < axisBytes; a += 16) {
      const values = v128.load(base + a);
      const q = query + (a << 1);
      sum = i32x4.add(sum, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(values), v128.load(q)));
      sum = i32x4.add(sum, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(values), v128.load(q + 16)));
    }
    const total =
      i32x4.extract_lane(sum, 0) +
      i32x4.extract_lane(sum, 1) +
      i32x4.extract_lane(sum, 2) +
      i32x4.extract_lane(sum, 3);
    store<f32>(out + ((<usize>row) << 2), <f32>total * load<f32>(scales + ((<usize>row) << 2)) * queryScale);
    base += rowBytes;
  }
}

/** out[i] = dot(row picked[i], query) over `axes` floats, for `count` picked rows. */
export function dotsOf(
  matrix: usize,
  stride: i32,
  axes: i32,
  query: usize,
  picked: usize,
  count: i32,
  out: usize,
): void {
  const rowBytes = (<usize>stride) << 2;
  const axisBytes = (<usize>axes) << 2;
  for (let i = 0; i < count; i++) {
    const base = matrix + <usize>load<i32>(picked + ((<usize>i) << 2)) * rowBytes;
    store<f32>(out + ((<usize>i) << 2), dot(base, query, axisBytes));
  }
}

// The selection heap: a min-heap by (score, -row), so its root is the worst kept.
let heapScores: usize = 0;
let heapRows: usize = 0;

function worse(sa: f32, ra: i32, sb: f32, rb: i32): bool {
  return sa < sb || (sa === sb && ra > rb);
}

function siftDown(size: i32, score: f32, row: i32): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    let m = l;
    const r = l + 1;
    if (
      r < size &&
      worse(
        load<f32>(heapScores + ((<usize>r) << 2)),
        load<i32>(heapRows + ((<usize>r) << 2)),
        load<f32>(heapScores + ((<usize>l) << 2)),
        load<i32>(heapRows + ((<usize>l) << 2)),
      )
    )
      m = r;
    const ms = load<f32>(heapScores + ((<usize>m) << 2));
    const mr = load<i32>(heapRows + ((<usize>m) << 2));
    if (!worse(ms, mr, score, row)) break;
    store<f32>(heapScores + ((<usize>i) << 2), ms);
    store<i32>(heapRows + ((<usize>i) << 2), mr);
    i = m;
  }
  store<f32>(heapScores + ((<usize>i) << 2), score);
  store<i32>(heapRows + ((<usize>i) << 2), row);
}

/**
 * The best `k` of `count` scores (their ids: ids[i], or i when ids is 0), best first, ties by the lower id, into
 * outIds/outScores (k slots each, and heap space at `scratch`: 8 × k bytes); returns how many were written.
 */
export function best(
  scores: usize,
  ids: usize,
  count: i32,
  k: i32,
  scratch: usize,
  outIds: usize,
  outScores: usize,
): i32 {
  if (k > count) k = count;
  if (k <= 0) return 0;
  heapScores = scratch;
  heapRows = scratch + ((<usize>k) << 2);
  let size = 0;
  for (let i = 0; i < count; i++) {
    const score = load<f32>(scores + ((<usize>i) << 2));
    const row = ids ? load<i32>(ids + ((<usize>i) << 2)) : i;
    if (size < k) {
      // Sift up.
      let at = size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        const ps = load<f32>(heapScores + ((<usize>parent) << 2));
        const pr = load<i32>(heapRows + ((<usize>parent) << 2));
        if (!worse(score, row, ps, pr)) break;
        store<f32>(heapScores + ((<usize>at) << 2), ps);
        store<i32>(heapRows + ((<usize>at) << 2), pr);
        at = parent;
      }
      store<f32>(heapScores + ((<usize>at) << 2), score);
      store<i32>(heapRows + ((<usize>at) << 2), row);
    } else if (worse(load<f32>(heapScores), load<i32>(heapRows), score, row)) {
      siftDown(size, score, row);
    }
  }
  // Pop the worst to the back: the output is best first.
  const written = size;
  for (let n = size - 1; n >= 0; n--) {
    const s = load<f32>(heapScores);
    const r = load<i32>(heapRows);
    store<f32>(outScores + ((<usize>n) << 2), s);
    store<i32>(outIds + ((<usize>n) << 2), r);
    const lastS = load<f32>(heapScores + ((<usize>n) << 2));
    const lastR = load<i32>(heapRows + ((<usize>n) << 2));
    if (n > 0) siftDown(n, lastS, lastR);
  }
  return written;
}

/** The `rank`-th largest (0-based) of `count` floats at `values`, which it reorders: a quickselect. */
function select(values: usize, count: i32, rank: i32): f32 {
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    // Median of three as the pivot.
    const mid = lo + ((hi - lo) >> 1);
    const a = load<f32>(values + ((<usize>lo) << 2));
    const b = load<f32>(values + ((<usize>mid) << 2));
    const c = load<f32>(values + ((<usize>hi) << 2));
    const pivot = max<f32>(min<f32>(a, b), min<f32>(max<f32>(a, b), c));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (load<f32>(values + ((<usize>i) << 2)) > pivot) i++;
      while (load<f32>(values + ((<usize>j) << 2)) < pivot) j--;
      if (i <= j) {
        const t = load<f32>(values + ((<usize>i) << 2));
        store<f32>(values + ((<usize>i) << 2), load<f32>(values + ((<usize>j) << 2)));
        store<f32>(values + ((<usize>j) << 2), t);
        i++;
        j--;
      }
    }
    if (rank <= j) hi = j;
    else if (rank >= i) lo = i;
    else break;
  }
  return load<f32>(values + ((<usize>rank) << 2));
}

/**
 * The best `k` of `count` scores (ids 0 … count-1), best first, ties by the lower id, as `best` gives them, but in
 * about one pass: a threshold from every `step`-th score admits a few more than k (rarely fewer: then every score
 * is selected from), and only those go through the heap. `scratch` holds count floats, `spare` 3 × capacity + 2 × k
 * words; returns how many were written.
 */
export function bestMany(
  scores: usize,
  count: i32,
  k: i32,
  capacity: i32,
  scratch: usize,
  spare: usize,
  outIds: usize,
  outScores: usize,
): i32 {
  if (k > count) k = count;
  if (k <= 0) return 0;
  const step = count / (k * 8);
  const ids = spare;
  const kept = spare + ((<usize>capacity) << 2);
  const heap = kept + ((<usize>capacity) << 2);
  if (step >= 4) {
    let samples = 0;
    for (let r = 0; r < count; r += step) {
      store<f32>(scratch + ((<usize>samples) << 2), load<f32>(scores + ((<usize>r) << 2)));
      samples++;
    }
    // Expected admissions: 1.25 k (the sample's rank r stands for r × step scores).
    const rank = min<i32>(samples - 1, (k * 5) / (4 * step));
    const threshold = select(scratch, samples, rank);
    let n = 0;
    for (let r = 0; r < count; r++) {
      const score = load<f32>(scores + ((<usize>r) << 2));
      if (score >= threshold) {
        if (n === capacity) {
          n = -1;
          break;
        }
        store<i32>(ids + ((<usize>n) << 2), r);
        store<f32>(kept + ((<usize>n) << 2), score);
        n++;
      }
    }
    if (n >= k) return best(kept, ids, n, k, heap, outIds, outScores);
  }
  return best(scores, 0, count, k, heap, outIds, outScores);
}

/**
 * out (`stride` floats) = Σ weights[i] × row ids[i] of `matrix` over `count` rows: a passage folded into the corpus
 * embedder's space from its terms' basis rows (stride a multiple of 4).
 */
export function combineRows(
  matrix: usize,
  stride: i32,
  ids: usize,
  weights: usize,
  count: i32,
  out: usize,
): void {
  const rowBytes = (<usize>stride) << 2;
  memory.fill(out, 0, rowBytes);
  for (let i = 0; i < count; i++) {
    const base = matrix + <usize>load<i32>(ids + ((<usize>i) << 2)) * rowBytes;
    const w = f32x4.splat(load<f32>(weights + ((<usize>i) << 2)));
    for (let a: usize = 0; a < rowBytes; a += 16)
      v128.store(out + a, f32x4.add(v128.load(out + a), f32x4.mul(w, v128.load(base + a))));
  }
}
