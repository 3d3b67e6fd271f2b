// A truncated SVD of a sparse term × passage matrix in pure TypeScript (the corpus embedder's training): the
// randomized range finder with power iterations (Halko, Martinsson & Tropp 2011), then Jacobi on the small Gram.

/** A sparse matrix stored by passage (column): passage j holds entries start[j] ≤ e < start[j + 1]. */
export interface SparseColumns {
  rows: number;
  start: Int32Array;
  row: Int32Array;
  value: Float32Array;
}

export interface SvdOptions {
  /** Extra columns of the random sketch (default 10). */
  oversample?: number;
  /** Power iterations, each sharpening the spectrum's decay (default 2). */
  powerIterations?: number;
  seed?: number;
}

export interface TruncatedSvd {
  /** Left singular vectors, row-major rows × k. */
  u: Float32Array;
  /** Singular values, descending. */
  sigma: Float64Array;
  k: number;
}

/** A seeded Gaussian source (mulberry32 + Box–Muller), so a corpus always trains the same model. */
export function gaussian(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** Y (rows × l) = A · X, X being columns × l, both row-major. */
function times(a: SparseColumns, x: Float32Array, l: number): Float32Array {
  const y = new Float32Array(a.rows * l);
  const columns = a.start.length - 1;
  for (let j = 0; j < columns; j++) {
    const xj = j * l;
    for (let e = a.start[j] as number; e < (a.start[j + 1] as number); e++) {
      const w = a.value[e] as number;
      const yi = (a.row[e] as number) * l;
      for (let c = 0; c < l; c++) y[yi + c] = (y[yi + c] as number) + w * (x[xj + c] as number);
    }
  }
  return y;
}

/** Z (columns × l) = Aᵀ · Y, Y being rows × l. */
function transposeTimes(a: SparseColumns, y: Float32Array, l: number): Float32Array {
  const columns = a.start.length - 1;
  const z = new Float32Array(columns * l);
  const sum = new Float64Array(l);
  for (let j = 0; j < columns; j++) {
    sum.fill(0);
    for (let e = a.start[j] as number; e < (a.start[j + 1] as number); e++) {
      const w = a.value[e] as number;
      const yi = (a.row[e] as number) * l;
      for (let c = 0; c < l; c++) sum[c] = (sum[c] as number) + w * (y[yi + c] as number);
    }
    for (let c = 0; c < l; c++) z[j * l + c] = sum[c] as number;
  }
  return z;
}

/** Orthonormalises the l columns of row-major `m` (n × l) in place: modified Gram–Schmidt, twice. */
export function orthonormalize(m: Float32Array, n: number, l: number): void {
  for (let pass = 0; pass < 2; pass++) {
    for (let c = 0; c < l; c++) {
      for (let p = 0; p < c; p++) {
        let dot = 0;
        for (let i = 0; i < n; i++) dot += (m[i * l + c] as number) * (m[i * l + p] as number);
        for (let i = 0; i < n; i++) m[i * l + c] = (m[i * l + c] as number) - dot * (m[i * l + p] as number);
      }
      let norm = 0;
      for (let i = 0; i < n; i++) norm += (m[i * l + c] as number) ** 2;
      norm = Math.sqrt(norm);
      // A column in the span of the others (rank below l) becomes zero rather than noise.
      const scale = norm > 1e-10 ? 1 / norm : 0;
      for (let i = 0; i < n; i++) m[i * l + c] = (m[i * l + c] as number) * scale;
    }
  }
}

/** Eigen-decomposition of a symmetric l × l matrix (cyclic Jacobi): values descending, vectors as columns. */
export function symmetricEigen(
  matrix: Float64Array,
  l: number,
): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(l * l);
  for (let i = 0; i < l; i++) v[i * l + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < l; p++) for (let q = p + 1; q < l; q++) off += (a[p * l + q] as number) ** 2;
    if (off < 1e-22) break;
    for (let p = 0; p < l; p++) {
      for (let q = p + 1; q < l; q++) {
        const apq = a[p * l + q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = ((a[q * l + q] as number) - (a[p * l + p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < l; k++) {
          const akp = a[k * l + p] as number;
          const akq = a[k * l + q] as number;
          a[k * l + p] = c * akp - s * akq;
          a[k * l + q] = s * akp + c * akq;
        }
        for (let k = 0; k < l; k++) {
          const apk = a[p * l + k] as number;
          const aqk = a[q * l + k] as number;
          a[p * l + k] = c * apk - s * aqk;
          a[q * l + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < l; k++) {
          const vkp = v[k * l + p] as number;
          const vkq = v[k * l + q] as number;
          v[k * l + p] = c * vkp - s * vkq;
          v[k * l + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = [...Array(l).keys()].sort((x, y) => (a[y * l + y] as number) - (a[x * l + x] as number));
  const values = Float64Array.from(order, (i) => a[i * l + i] as number);
  const vectors = new Float64Array(l * l);
  for (const [to, from] of order.entries())
    for (let k = 0; k < l; k++) vectors[k * l + to] = v[k * l + from] as number;
  return { values, vectors };
}

/** The k leading singular triplets' left vectors and values of `a` (k is capped by the matrix's shape). */
export function truncatedSvd(a: SparseColumns, k: number, options: SvdOptions = {}): TruncatedSvd {
  const columns = a.start.length - 1;
  const rank = Math.max(1, Math.min(k, a.rows, columns));
  const l = Math.min(rank + (options.oversample ?? 10), a.rows, columns);
  const random = gaussian(options.seed ?? 1);
  const omega = new Float32Array(columns * l);
  for (let i = 0; i < omega.length; i++) omega[i] = random();
  let y = times(a, omega, l);
  for (let q = 0; q < (options.powerIterations ?? 2); q++) {
    orthonormalize(y, a.rows, l);
    const z = transposeTimes(a, y, l);
    orthonormalize(z, columns, l);
    y = times(a, z, l);
  }
  orthonormalize(y, a.rows, l);
  // B = Qᵀ A; B Bᵀ = Zᵀ Z with Z = Aᵀ Q, whose eigenvectors W give U = Q W and σ = √λ.
  const z = transposeTimes(a, y, l);
  const gram = new Float64Array(l * l);
  for (let j = 0; j < columns; j++)
    for (let p = 0; p < l; p++) {
      const zp = z[j * l + p] as number;
      if (zp === 0) continue;
      for (let q = p; q < l; q++)
        gram[p * l + q] = (gram[p * l + q] as number) + zp * (z[j * l + q] as number);
    }
  for (let p = 0; p < l; p++) for (let q = 0; q < p; q++) gram[p * l + q] = gram[q * l + p] as number;
  const { values, vectors } = symmetricEigen(gram, l);
  const u = new Float32Array(a.rows * rank);
  for (let i = 0; i < a.rows; i++)
    for (let c = 0; c < rank; c++) {
      let sum = 0;
      for (let p = 0; p < l; p++) sum += (y[i * l + p] as number) * (vectors[p * l + c] as number);
      u[i * rank + c] = sum;
    }
  const sigma = Float64Array.from(values.subarray(0, rank), (value) => Math.sqrt(Math.max(0, value)));
  return { u, sigma, k: rank };
}
