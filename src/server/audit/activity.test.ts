import { describe, expect, it } from "vitest";
import { ACTIVITY_GROUP_KEEP, ActivityGroups, LatencyHistogram, percentile } from "./activity.js";

// The aggregation over a store (buckets, breakdowns, chunks, 100,000 calls) is in store.contract.test.ts, run on
// every backend; here are its pure parts.
describe("activity aggregation", () => {
  it("takes nearest-rank percentiles", () => {
    expect(percentile([], 0.5)).toBe(0);
    expect(percentile([7], 0.95)).toBe(7);
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile(hundred, 0.95)).toBe(95);
  });

  it("holds at most twice the kept keys per breakdown and loses no busy key", () => {
    const groups = new ActivityGroups();
    let largest = 0;
    for (let index = 0; index < 10_000; index += 1) {
      groups.tally(`one-${index}`).add(false, 10, 1);
      if (index % 10 === 0) groups.tally("busy").add(false, 10, 1);
      largest = Math.max(largest, groups.size);
    }
    expect(largest).toBe(2 * ACTIVITY_GROUP_KEEP);
    expect(groups.size).toBeLessThanOrEqual(2 * ACTIVITY_GROUP_KEEP);
    expect(groups.top()[0]).toMatchObject({ key: "busy", calls: 1_000 });
    // Below the bound nothing is dropped: every key is there, exactly.
    const small = new ActivityGroups(10);
    for (let index = 0; index < 20; index += 1) small.tally(`k${index}`).add(false, 10, 1);
    expect(small.size).toBe(20);
    small.tally("k20").add(false, 10, 1);
    expect(small.size).toBe(11);
    // The newest of equally busy keys stay, and the newcomer; a busier old key stays too.
    expect([...small.tallies.keys()]).toEqual([...Array.from({ length: 10 }, (_, i) => `k${i + 10}`), "k20"]);
    const old = new ActivityGroups(10);
    old.tally("old").add(false, 10, 1);
    old.tally("old").add(false, 10, 1);
    for (let index = 0; index < 20; index += 1) old.tally(`k${index}`).add(false, 10, 1);
    expect([...old.tallies.keys()]).toEqual(["old", ...Array.from({ length: 10 }, (_, i) => `k${i + 10}`)]);
  });

  it("takes percentiles from the histogram within 0.1 ms below 100 ms and 1 % above", () => {
    const figures = (values: number[]) => {
      const histogram = new LatencyHistogram();
      for (const value of values) histogram.add(value);
      const sorted = Float64Array.from(values).sort();
      return {
        got: histogram.percentiles([0.5, 0.95]),
        exact: [percentile(sorted, 0.5), percentile(sorted, 0.95)],
      };
    };
    const within = (values: number[]) => {
      const { got, exact } = figures(values);
      got.forEach((value, index) => {
        const want = exact[index] as number;
        if (want < 100) expect(Math.abs(value - want)).toBeLessThanOrEqual(0.1 + 1e-9);
        else expect(Math.abs(value - want) / want).toBeLessThanOrEqual(0.01);
      });
      return got;
    };
    expect(figures([]).got).toEqual([0, 0]);
    // Whole and tenth milliseconds below 100 ms are exact.
    expect(within([7])).toEqual([7, 7]);
    expect(within([42.3, 42.3, 42.3])).toEqual([42.3, 42.3]);
    expect(within(Array.from({ length: 100 }, (_, i) => i + 1))).toEqual([50, 95]);
    // Nonsense latencies count as 0 ms.
    expect(figures([0, -5, Number.NaN]).got).toEqual([0, 0]);
    const one = within([1234]);
    expect(one[0]).toBe(one[1]);
    within(Array(1000).fill(250));
    // Heavy tails: mostly fast, a few very slow; log-normal; a pareto tail beyond an hour.
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return (seed + 0.5) / 2 ** 31;
    };
    within(Array.from({ length: 10_000 }, (_, i) => (i % 100 < 93 ? 5 + (i % 7) : 30_000 + i)));
    within(
      Array.from({ length: 20_000 }, () =>
        Math.exp(4 + 2 * Math.sqrt(-2 * Math.log(random())) * Math.cos(6.28318 * random())),
      ),
    );
    within(Array.from({ length: 20_000 }, () => 50 / random() ** 1.5));
    within(Array.from({ length: 5_000 }, () => Math.round(random() * 10_000) / 10));
    within([1e11, 2e11, 3]);
    const infinite = figures([Number.POSITIVE_INFINITY]).got[0] as number;
    expect(infinite).toBeGreaterThan(0.99e12);
    expect(infinite).toBeLessThan(1.01e12);
  });
});
