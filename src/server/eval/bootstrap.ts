// Paired bootstrap confidence intervals over queries (Efron's percentile method), seeded so that the same input
// always prints the same interval.
import { mulberry32 } from "../../shared/random.js";

export interface Interval {
  mean: number;
  /** The 2.5th and 97.5th percentiles of the resampled means (a 95 % interval). */
  low: number;
  high: number;
}

export interface BootstrapOptions {
  /** Resamples (default 2,000). */
  resamples?: number;
  /** The generator's seed (default 1): the same seed and values give the same interval. */
  seed?: number;
}

export const DEFAULT_RESAMPLES = 2000;
export const DEFAULT_SEED = 1;

/** The mean of `values` with a 95 % interval: each resample draws as many queries, with replacement. */
export function bootstrapMean(values: readonly number[], options: BootstrapOptions = {}): Interval {
  const n = values.length;
  const mean = n === 0 ? 0 : sum(values, n) / n;
  if (n === 0) return { mean, low: 0, high: 0 };
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const random = mulberry32(options.seed ?? DEFAULT_SEED);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let total = 0;
    for (let i = 0; i < n; i++) total += values[Math.floor(random() * n)] as number;
    means[r] = total / n;
  }
  means.sort();
  return { mean, low: quantile(means, 0.025), high: quantile(means, 0.975) };
}

/**
 * The mean difference `treatment - baseline` over the same queries with a 95 % interval: each resample draws
 * query indices and takes both methods' scores of those queries (the pairing removes the queries' own spread).
 */
export function pairedDifference(
  baseline: readonly number[],
  treatment: readonly number[],
  options: BootstrapOptions = {},
): Interval {
  if (baseline.length !== treatment.length) throw new RangeError("paired scores must cover the same queries");
  return bootstrapMean(
    treatment.map((value, i) => value - (baseline[i] as number)),
    options,
  );
}

function sum(values: readonly number[], n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) total += values[i] as number;
  return total;
}

function quantile(sorted: Float64Array, p: number): number {
  const at = Math.min(sorted.length - 1, Math.max(0, Math.round(p * (sorted.length - 1))));
  return sorted[at] as number;
}
