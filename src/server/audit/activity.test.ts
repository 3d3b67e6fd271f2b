import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import {
  ACTIVITY_CHUNK,
  ACTIVITY_GROUP_KEEP,
  ActivityGroups,
  bucketCount,
  LatencyHistogram,
  percentile,
} from "./activity.js";
import { type AuditLog, openAuditLog, type ToolCallEvent } from "./store.js";

const call = (over: Partial<ToolCallEvent> = {}): ToolCallEvent => ({
  kind: "tool_call",
  tool: "context_search",
  endpoint: "ivoai-context",
  credential_id: "cli_a",
  session_id: "s1",
  tier: "read",
  status: "SUCCESS",
  latency_ms: 10,
  tokens_consumed: 5,
  guardrail_checked: true,
  ...over,
});

describe("activity aggregation", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let clock: Date;
  let audit: AuditLog;
  const at = (iso: string, event: ToolCallEvent) => {
    clock = new Date(iso);
    audit.record(event);
  };

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    clock = new Date("2026-01-01T00:00:00Z");
    audit = openAuditLog(`${dir}/audit.sqlite`, () => clock);
  });
  afterEach(async () => {
    audit.close();
    await cleanup();
  });

  it("takes nearest-rank percentiles", () => {
    expect(percentile([], 0.5)).toBe(0);
    expect(percentile([7], 0.95)).toBe(7);
    expect(percentile([10, 20, 30, 40], 0.5)).toBe(20);
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile(hundred, 0.95)).toBe(95);
  });

  it("keeps the busiest sessions exact among 10,000 one-call sessions, in bounded groups", async () => {
    const busy = ["busy-a", "busy-b", "busy-c"];
    const base = Date.parse("2026-01-01T10:00:00Z");
    for (let index = 0; index < 10_000; index += 1) {
      clock = new Date(base + index);
      audit.record(call({ session_id: `one-${index}` }));
      // The busy sessions call every 10th, 20th and 40th row, from the first row on.
      busy.forEach((session, rank) => {
        if (index % (10 * 2 ** rank) === 0) audit.record(call({ session_id: session }));
      });
    }
    const activity = await audit.activity({
      since: new Date(base),
      until: new Date(base + 3_600_000),
      bucket: "hour",
    });
    expect(activity.by_session.slice(0, 3).map((entry) => [entry.key, entry.calls])).toEqual([
      ["busy-a", 1_000],
      ["busy-b", 500],
      ["busy-c", 250],
    ]);
    expect(activity.by_session).toHaveLength(50);
    expect(activity.totals.calls).toBe(10_000 + 1_000 + 500 + 250);
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

  it("counts calls, errors, latency and tokens per bucket, empty buckets included", async () => {
    at("2026-01-01T10:05:00.000Z", call({ latency_ms: 10, tokens_consumed: 1 }));
    at("2026-01-01T10:59:59.999Z", call({ latency_ms: 30, tokens_consumed: 2, status: "FAILED" }));
    at("2026-01-01T10:30:00.000Z", call({ latency_ms: 20, tokens_consumed: 3, tool: "memory_query" }));
    at("2026-01-01T12:00:00.000Z", call({ latency_ms: 0, status: "REJECTED", credential_id: "cli_b" }));
    at("2026-01-01T12:10:00.000Z", call({ status: "PENDING_HUMAN_APPROVAL", session_id: null }));
    // Outside the window on both sides, and a decision (not a tool call) inside it.
    at("2026-01-01T09:59:59.999Z", call());
    at("2026-01-01T13:00:00.000Z", call());
    clock = new Date("2026-01-01T11:00:00Z");
    audit.record({ kind: "approval_decision", actor: "ann", detail: {} });

    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T13:00:00Z"),
      bucket: "hour",
    });
    expect(activity.totals).toEqual({ calls: 5, errors: 2, p50_ms: 10, p95_ms: 30, tokens: 16 });
    expect(activity.series.map((entry) => [entry.start, entry.calls, entry.errors])).toEqual([
      ["2026-01-01T10:00:00.000Z", 3, 1],
      ["2026-01-01T11:00:00.000Z", 0, 0],
      ["2026-01-01T12:00:00.000Z", 2, 1],
    ]);
    expect(activity.series[0]).toMatchObject({ p50_ms: 20, p95_ms: 30, tokens: 6 });
    expect(activity.series[1]).toMatchObject({ p50_ms: 0, p95_ms: 0, tokens: 0 });
    expect(activity.by_tool.map((entry) => [entry.key, entry.calls])).toEqual([
      ["context_search", 4],
      ["memory_query", 1],
    ]);
    expect(activity.by_credential.map((entry) => [entry.key, entry.calls, entry.errors])).toEqual([
      ["cli_a", 4, 1],
      ["cli_b", 1, 1],
    ]);
    // Calls without a session count everywhere else, not under a session.
    expect(activity.by_session.map((entry) => [entry.key, entry.calls])).toEqual([["s1", 4]]);
  });

  it("aligns buckets to the clock and counts them up front", async () => {
    const query = {
      since: new Date("2026-01-01T10:30:10Z"),
      until: new Date("2026-01-01T10:33:00Z"),
      bucket: "minute" as const,
    };
    expect(bucketCount(query)).toBe(3);
    at("2026-01-01T10:30:20.000Z", call());
    const activity = await audit.activity(query);
    expect(activity.series.map((entry) => entry.start)).toEqual([
      "2026-01-01T10:30:00.000Z",
      "2026-01-01T10:31:00.000Z",
      "2026-01-01T10:32:00.000Z",
    ]);
    expect(activity.series.map((entry) => entry.calls)).toEqual([1, 0, 0]);
    expect(bucketCount({ ...query, until: new Date("2026-03-01T00:00:00Z") })).toBeGreaterThan(1_500);
    expect(bucketCount({ since: query.since, until: new Date("2026-01-02T10:00:00Z"), bucket: "day" })).toBe(
      2,
    );
  });

  it("keeps the top 50 of each breakdown, largest first", async () => {
    for (let index = 0; index < 60; index += 1) {
      for (let repeat = 0; repeat <= index % 3; repeat += 1)
        at("2026-01-01T10:00:00.000Z", call({ session_id: `s${index}` }));
    }
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.by_session).toHaveLength(50);
    expect(activity.by_session[0]?.calls).toBe(3);
    expect(activity.by_session.map((entry) => entry.calls)).toEqual([
      ...Array(20).fill(3),
      ...Array(20).fill(2),
      ...Array(10).fill(1),
    ]);
    expect(activity.totals.calls).toBe(20 * 1 + 20 * 2 + 20 * 3);
  });

  it("reads calls recorded at the same instant across chunk boundaries exactly once", async () => {
    for (let index = 0; index < ACTIVITY_CHUNK * 2 + 7; index += 1)
      at("2026-01-01T10:00:00.000Z", call({ latency_ms: index % 100 }));
    const activity = await audit.activity({
      since: new Date("2026-01-01T10:00:00Z"),
      until: new Date("2026-01-01T11:00:00Z"),
      bucket: "hour",
    });
    expect(activity.totals.calls).toBe(ACTIVITY_CHUNK * 2 + 7);
  });

  it("aggregates 100,000 calls in the window in reasonable time", async () => {
    const base = Date.parse("2026-01-01T00:00:00Z");
    const tools = ["context_search", "memory_query", "memory_write_page", "context_get_document"];
    for (let index = 0; index < 100_000; index += 1) {
      clock = new Date(base + index * 800);
      audit.record(
        call({
          tool: tools[index % 4] as string,
          credential_id: `cli_${index % 20}`,
          session_id: `s${index % 500}`,
          latency_ms: index % 1000,
          status: index % 10 === 0 ? "FAILED" : "SUCCESS",
        }),
      );
    }
    // Other work runs while it aggregates: it yields between chunks.
    let ticks = 0;
    let done = false;
    const tick = () => {
      ticks += 1;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    const activity = await audit.activity({
      since: new Date(base),
      until: new Date(base + 86_400_000),
      bucket: "minute",
    });
    const elapsed = performance.now() - started;
    done = true;
    expect(ticks).toBeGreaterThanOrEqual(100_000 / ACTIVITY_CHUNK - 1);
    console.info(`activity over 100,000 calls, 1,440 minute buckets: ${elapsed.toFixed(0)} ms`);
    expect(activity.totals.calls).toBe(100_000);
    expect(activity.totals.errors).toBe(10_000);
    // 499 ms lies in a 1 %-wide bin reported by its middle.
    expect(Math.abs(activity.totals.p50_ms - 499) / 499).toBeLessThan(0.01);
    expect(activity.series).toHaveLength(1_440);
    expect(elapsed).toBeLessThan(3_000);
  }, 60_000);
});
