// A truncated SVD of a sparse term × passage matrix in pure TypeScript (the corpus embedder's training): the
// randomized range finder with power iterations (Halko, Martinsson & Tropp 2011), then Jacobi on the small Gram.
import { mulberry32 } from "../../shared/random.js";

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
  const next = mulberry32(seed);
  // Shifted half a step off 0, so the logarithm is finite.
  const uniform = () => next() + 0.5 / 4294967296;
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

/**
 * Orthonormalises the l columns of row-major `m` (n × l) in place: Cholesky QR, twice by default (CholeskyQR2; one
 * pass is enough between power iterations, which only need a well-conditioned basis). The Gram
 * matrix and the triangular solve read `m` a row at a time (a column-at-a-time Gram–Schmidt strides through the
 * whole matrix for every pair of columns: several times slower at the sizes training uses). A column in the span of
 * the earlier ones (rank below l) becomes zero rather than noise.
 */
export function orthonormalize(m: Float32Array, n: number, l: number, passes = 2): void {
  const gram = new Float64Array(l * l);
  const r = new Float64Array(l * l);
  const rt = new Float64Array(l * l);
  const row = new Float64Array(l);
  for (let pass = 0; pass < passes; pass++) {
    gram.fill(0);
    for (let i = 0; i < n; i++) {
      const base = i * l;
      for (let p = 0; p < l; p++) {
        const mp = m[base + p] as number;
        if (mp === 0) continue;
        const gp = p * l;
        for (let q = p; q < l; q++) gram[gp + q] = (gram[gp + q] as number) + mp * (m[base + q] as number);
      }
    }
    // Upper-triangular R with Rᵀ R = G; a column whose residual is (almost) nothing gets an empty row.
    r.fill(0);
    for (let j = 0; j < l; j++) {
      let d = gram[j * l + j] as number;
      for (let k = 0; k < j; k++) d -= (r[k * l + j] as number) ** 2;
      if (!(d > 1e-9 * (gram[j * l + j] as number)) || d <= 0) continue;
      const rjj = Math.sqrt(d);
      r[j * l + j] = rjj;
      for (let q = j + 1; q < l; q++) {
        let sum = gram[j * l + q] as number;
        for (let k = 0; k < j; k++) sum -= (r[k * l + j] as number) * (r[k * l + q] as number);
        r[j * l + q] = sum / rjj;
      }
    }
    // Rᵀ row by row, so the substitution reads it contiguously.
    for (let j = 0; j < l; j++) for (let k = 0; k < l; k++) rt[j * l + k] = r[k * l + j] as number;
    // Each row x becomes y with y R = x (forward substitution; an empty column stays zero).
    for (let i = 0; i < n; i++) {
      const base = i * l;
      for (let j = 0; j < l; j++) {
        const rjj = r[j * l + j] as number;
        if (rjj === 0) {
          row[j] = 0;
          continue;
        }
        let sum = m[base + j] as number;
        const rj = j * l;
        for (let k = 0; k < j; k++) sum -= (row[k] as number) * (rt[rj + k] as number);
        row[j] = sum / rjj;
      }
      for (let j = 0; j < l; j++) m[base + j] = row[j] as number;
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
    orthonormalize(y, a.rows, l, 1);
    const z = transposeTimes(a, y, l);
    orthonormalize(z, columns, l, 1);
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
