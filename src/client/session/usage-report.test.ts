// The usage report over real session records in a temp state dir: sums by UTC day and executor, a price an
// executor never said kept unknown (never $0), lower bounds marked, and the --since/--until bounds.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AutoState } from "./auto-state.js";
import { stateWith, turn, usage, writeSession } from "./usage.test-kit.js";
import { readUsageReport, sessionPriceComplete, taskPriceComplete } from "./usage-report.js";

describe("ivoai usage's report", () => {
  let dir = "";
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-usage-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const session = (startedAt: string, auto?: AutoState) => writeSession(dir, startedAt, auto);

  it("sums sessions by their UTC start day and executor, with per-executor totals and a grand total", async () => {
    // 23:30 at UTC-2 on Dec 1 is Dec 2 in UTC: the day is the UTC one.
    await session("2026-12-01T23:30:00.000-02:00", stateWith([turn("claude", usage(100, 40, 10, 0.02))]));
    await session(
      "2026-12-02T08:00:00.000Z",
      stateWith([turn("codex", usage(1000, 0, 50, null)), turn("claude", usage(200, 100, 20, 0.03))]),
    );
    await session("2026-12-03T08:00:00.000Z", stateWith([turn("codex", usage(500, 10, 5, null))]));
    await session("2026-12-03T09:00:00.000Z"); // direct: not orchestrated, not counted
    const report = await readUsageReport(dir);
    expect(report.time_zone).toBe("UTC");
    expect(report.rows.map((row) => [row.day, row.executor, row.sessions, row.turns])).toEqual([
      ["2026-12-02", "codex", 1, 1],
      ["2026-12-02", "claude", 2, 2],
      ["2026-12-03", "codex", 1, 1],
    ]);
    const claude = report.rows[1];
    expect(claude).toMatchObject({ input_tokens: 300, cached_input_tokens: 140, output_tokens: 30 });
    expect(claude?.cost_usd).toBeCloseTo(0.05, 9);
    expect(claude?.cost_complete).toBe(true);
    // Codex never says a price: unknown, not zero.
    expect(report.rows[0]).toMatchObject({ cost_usd: null, cost_complete: false });
    expect(report.by_executor).toEqual([
      expect.objectContaining({ executor: "codex", sessions: 2, input_tokens: 1500, cost_usd: null }),
      expect.objectContaining({ executor: "claude", sessions: 2, output_tokens: 30, cost_complete: true }),
    ]);
    // Three orchestrated sessions, four turns; their price is a lower bound (codex's part unknown).
    expect(report.totals).toMatchObject({
      sessions: 3,
      turns: 4,
      input_tokens: 1800,
      cached_input_tokens: 150,
      output_tokens: 85,
      cost_complete: false,
    });
    expect(report.totals.cost_usd).toBeCloseTo(0.05, 9);
  });

  it("keeps only sessions started in [since, until) and says nothing was spent in an empty range", async () => {
    await session("2026-12-01T10:00:00.000Z", stateWith([turn("claude", usage(1, 0, 1, 0.001))]));
    await session("2026-12-02T10:00:00.000Z", stateWith([turn("claude", usage(2, 0, 2, 0.002))]));
    await session("2026-12-03T10:00:00.000Z", stateWith([turn("claude", usage(4, 0, 4, 0.004))]));
    const middle = await readUsageReport(dir, {
      since: "2026-12-02T10:00:00.000Z",
      until: "2026-12-03T10:00:00.000Z",
    });
    expect(middle.rows.map((row) => [row.day, row.input_tokens])).toEqual([["2026-12-02", 2]]);
    expect(middle).toMatchObject({ since: "2026-12-02T10:00:00.000Z", until: "2026-12-03T10:00:00.000Z" });
    const later = await readUsageReport(dir, { since: "2026-12-02T10:00:00.001Z" });
    expect(later.rows.map((row) => row.day)).toEqual(["2026-12-03"]);
    const none = await readUsageReport(dir, { since: "2027-01-01T00:00:00.000Z" });
    expect(none.rows).toEqual([]);
    expect(none.totals).toMatchObject({ sessions: 0, turns: 0, input_tokens: 0, cost_usd: null });
  });

  it("counts each executor's turns exactly, also those dropped from the list; older records give a lower bound", async () => {
    const listed = [turn("claude", usage(10, 0, 1, 0.01)), turn("codex", usage(10, 0, 1, null))];
    const counted = stateWith(listed, 70);
    // The engine counts every turn per executor, also the ones the 64-turn list no longer holds.
    Object.assign(counted.usage_by_executor.claude ?? {}, { turns: 40 });
    Object.assign(counted.usage_by_executor.codex ?? {}, { turns: 30 });
    await session("2026-12-01T10:00:00.000Z", counted);
    // A record from before the count: only its listed turns are known.
    const older = stateWith(listed, 70);
    for (const entry of Object.values(older.usage_by_executor)) {
      delete (entry as { turns?: number }).turns;
      delete (entry as { unpriced_turns?: number }).unpriced_turns;
    }
    await session("2026-12-02T10:00:00.000Z", older);
    const report = await readUsageReport(dir);
    const day = (date: string) => report.rows.filter((row) => row.day === date);
    expect(day("2026-12-01").map((row) => [row.executor, row.turns, row.turns_complete])).toEqual([
      ["codex", 30, true],
      ["claude", 40, true],
    ]);
    expect(day("2026-12-02").every((row) => row.turns === 1 && !row.turns_complete)).toBe(true);
    expect(report.totals).toMatchObject({ turns: 140, turns_complete: true });
  });

  it("tells a session's or task's partly unknown price from a complete one", () => {
    const mixed = stateWith([
      turn("claude", usage(10, 0, 1, 0.01), "t1"),
      turn("codex", usage(10, 0, 1, null), "t1"),
      turn("claude", usage(10, 0, 1, 0.01), "t2"),
      turn("codex", null, "t2"), // a failed turn reports nothing: nothing unpriced
    ]);
    expect(sessionPriceComplete(mixed)).toBe(false);
    expect(taskPriceComplete(mixed, "t1")).toBe(false);
    expect(taskPriceComplete(mixed, "t2")).toBe(true);
    expect(sessionPriceComplete(stateWith([turn("claude", usage(10, 0, 1, 0.01))]))).toBe(true);
  });
});
