import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../shared/random.js";
import { bootstrapMean, pairedDifference } from "./bootstrap.js";

const noisy = (seed: number, n: number) => {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => random());
};

describe("paired bootstrap", () => {
  it("gives the same interval for the same input and seed, and another for another seed", () => {
    const a = noisy(7, 200);
    const b = noisy(8, 200);
    expect(pairedDifference(a, b)).toEqual(pairedDifference(a, b));
    expect(bootstrapMean(a, { seed: 3 })).toEqual(bootstrapMean(a, { seed: 3 }));
    expect(bootstrapMean(a, { seed: 3 })).not.toEqual(bootstrapMean(a, { seed: 4 }));
  });

  it("puts a clearly better method's difference above 0", () => {
    const baseline = noisy(11, 100).map((value) => value * 0.5);
    const better = baseline.map((value, i) => Math.min(1, value + 0.15 + (i % 3) * 0.02));
    const diff = pairedDifference(baseline, better);
    expect(diff.mean).toBeGreaterThan(0.15);
    expect(diff.low).toBeGreaterThan(0);
    expect(diff.high).toBeGreaterThan(diff.low);
  });

  it("spans 0 for methods that win and lose about equally", () => {
    const baseline = noisy(21, 100);
    // Each query moves up or down by the same amount in turn: no method is better.
    const other = baseline.map((value, i) => value + (i % 2 === 0 ? 0.2 : -0.2));
    const diff = pairedDifference(baseline, other);
    expect(diff.low).toBeLessThan(0);
    expect(diff.high).toBeGreaterThan(0);
    expect(pairedDifference(baseline, baseline)).toEqual({ mean: 0, low: 0, high: 0 });
  });

  it("brackets the mean of one method", () => {
    const values = noisy(5, 300);
    const { mean, low, high } = bootstrapMean(values);
    expect(low).toBeLessThan(mean);
    expect(high).toBeGreaterThan(mean);
    expect(high - low).toBeLessThan(0.1);
  });
});
