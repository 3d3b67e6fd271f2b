// The corpus embedder's SVD against singular values known in closed form, and its guarantees on a random matrix.
import { describe, expect, it } from "vitest";
import { gaussian, type SparseColumns, symmetricEigen, truncatedSvd } from "./lsa.js";

/** Column-major dense → sparse columns. */
function sparse(rows: number, columns: number[][]): SparseColumns {
  const start = [0];
  const row: number[] = [];
  const value: number[] = [];
  for (const column of columns) {
    column.forEach((x, i) => {
      if (x !== 0) {
        row.push(i);
        value.push(x);
      }
    });
    start.push(row.length);
  }
  return { rows, start: Int32Array.from(start), row: Int32Array.from(row), value: Float32Array.from(value) };
}

describe("truncatedSvd", () => {
  it("finds the singular values of a matrix whose SVD is known", () => {
    // A = diag(5, 3, 2, 1) with rows permuted: singular values 5, 3, 2, 1, left vectors the permuted unit vectors.
    const a = sparse(4, [
      [0, 0, 5, 0],
      [3, 0, 0, 0],
      [0, 0, 0, 2],
      [0, 1, 0, 0],
    ]);
    const svd = truncatedSvd(a, 3, { oversample: 1 });
    expect([...svd.sigma].map((s) => Number(s.toFixed(5)))).toEqual([5, 3, 2]);
    // The first left vector is ±e₂ (the row holding 5).
    expect(Math.abs(svd.u[2 * 3] as number)).toBeCloseTo(1, 5);
  });

  it("gives orthonormal left vectors and the leading singular values of a random sparse matrix", () => {
    const random = gaussian(7);
    const rows = 40;
    const columns: number[][] = [];
    for (let j = 0; j < 60; j++)
      columns.push(Array.from({ length: rows }, () => (random() > 1 ? random() : 0)));
    const a = sparse(rows, columns);
    const k = 5;
    const svd = truncatedSvd(a, k, { powerIterations: 6 });
    for (let p = 0; p < k; p++)
      for (let q = 0; q < k; q++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += (svd.u[i * k + p] as number) * (svd.u[i * k + q] as number);
        expect(dot).toBeCloseTo(p === q ? 1 : 0, 4);
      }
    // Reference: the eigenvalues of A·Aᵀ (dense, exact Jacobi).
    const gram = new Float64Array(rows * rows);
    for (const column of columns)
      for (let i = 0; i < rows; i++)
        for (let m = 0; m < rows; m++)
          gram[i * rows + m] = (gram[i * rows + m] as number) + (column[i] as number) * (column[m] as number);
    const exact = symmetricEigen(gram, rows).values;
    for (let c = 0; c < k; c++) expect(svd.sigma[c]).toBeCloseTo(Math.sqrt(exact[c] as number), 2);
  });

  it("caps the rank at the matrix's shape", () => {
    const svd = truncatedSvd(
      sparse(3, [
        [1, 0, 0],
        [0, 2, 0],
      ]),
      10,
    );
    expect(svd.k).toBe(2);
    expect([...svd.sigma].map((s) => Number(s.toFixed(5)))).toEqual([2, 1]);
  });
});
