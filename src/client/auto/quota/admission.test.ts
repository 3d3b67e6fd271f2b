import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QuotaSnapshot } from "../contracts.js";
import { admitSnapshots, contextPressure, createQuotaManager, UNKNOWN_RESET_TRUST_MS } from "./admission.js";

const NOW = new Date("2026-11-30T04:00:00.000Z");
const rule = { headroomPercent: 10, now: NOW };
const snap = (fields: Partial<QuotaSnapshot>): QuotaSnapshot => ({
  executor: "codex",
  window: "primary",
  used_percent: 10,
  status: null,
  resets_at: "2026-11-30T08:00:00.000Z",
  observed_at: "2026-11-30T03:00:00.000Z",
  source: "app-server",
  ...fields,
});

describe("admitSnapshots", () => {
  it("admits without data, and says so", () => {
    expect(admitSnapshots("codex", [snap({ executor: "claude", used_percent: 100 })], rule)).toEqual({
      admitted: true,
      reason: "no quota data",
    });
  });

  it("refuses at exactly 100 − headroom and names the window, the %, the headroom and the reset", () => {
    expect(admitSnapshots("codex", [snap({ used_percent: 89.9 })], rule).admitted).toBe(true);
    expect(admitSnapshots("codex", [snap({ window: "secondary", used_percent: 90 })], rule)).toEqual({
      admitted: false,
      reason: "codex secondary window at 90% (headroom 10%) until 2026-11-30T08:00:00.000Z",
    });
    expect(
      admitSnapshots("codex", [snap({ used_percent: 90 })], { ...rule, headroomPercent: 5 }).admitted,
    ).toBe(true);
  });

  it("trusts a rejection without a reset time for a while, not forever", () => {
    const rejected = (ageMs: number) =>
      admitSnapshots(
        "claude",
        [
          snap({
            executor: "claude",
            window: "five_hour",
            used_percent: null,
            status: "rejected",
            resets_at: null,
            observed_at: new Date(NOW.getTime() - ageMs).toISOString(),
          }),
        ],
        rule,
      ).admitted;
    expect(rejected(UNKNOWN_RESET_TRUST_MS - 1_000)).toBe(false);
    expect(rejected(UNKNOWN_RESET_TRUST_MS + 1_000)).toBe(true);
  });

  it("refuses a window the vendor rejected even without a percentage", () => {
    const result = admitSnapshots(
      "claude",
      [
        snap({
          executor: "claude",
          window: "five_hour",
          used_percent: null,
          status: "rejected",
          resets_at: null,
          observed_at: new Date(NOW.getTime() - 60_000).toISOString(),
        }),
      ],
      rule,
    );
    expect(result.admitted).toBe(false);
    expect(result.reason).toBe(
      "claude five_hour window rejected by claude (headroom 10%) reset time unknown",
    );
  });

  it("admits again once the window's reset time has passed", () => {
    const reset = snap({ used_percent: 100, status: "rejected", resets_at: "2026-11-30T03:59:59.000Z" });
    expect(admitSnapshots("codex", [reset], rule).admitted).toBe(true);
  });

  it("one bad window is enough", () => {
    const result = admitSnapshots("codex", [snap({}), snap({ window: "secondary", used_percent: 97 })], rule);
    expect(result.admitted).toBe(false);
    expect(result.reason).toContain("secondary window at 97%");
  });
});

describe("createQuotaManager", () => {
  let stateDir: string;
  beforeEach(async () => {
    stateDir = await fs.mkdtemp(path.join(os.tmpdir(), "ivoai-admission-"));
  });
  afterEach(() => fs.rm(stateDir, { recursive: true, force: true }));

  it("admits from what was observed, with the configured headroom", async () => {
    const quota = createQuotaManager({ stateDir, headroomPercent: 20, now: () => NOW });
    expect((await quota.admit("codex")).reason).toBe("no quota data");
    await quota.observe([snap({ used_percent: 81 })]);
    expect(await quota.admit("codex")).toEqual({
      admitted: false,
      reason: "codex primary window at 81% (headroom 20%) until 2026-11-30T08:00:00.000Z",
    });
    expect(await quota.admit("claude")).toEqual({ admitted: true, reason: "no quota data" });
    expect((await quota.current("codex"))[0]?.used_percent).toBe(81);
  });

  it("claude's refresh returns what is stored (nothing to probe)", async () => {
    const quota = createQuotaManager({ stateDir, now: () => NOW });
    await quota.observe([snap({ executor: "claude", window: "seven_day", source: "statusline" })]);
    const refreshed = await quota.refresh("claude", "/nonexistent/claude", {});
    expect(refreshed.snapshots.map((entry) => entry.window)).toEqual(["seven_day"]);
    expect(refreshed.problems).toEqual([]);
  });

  it("rejects a headroom outside 0..100", () => {
    expect(() => createQuotaManager({ stateDir, headroomPercent: 100 })).toThrow(/headroom/);
    expect(() => createQuotaManager({ stateDir, headroomPercent: -1 })).toThrow(/headroom/);
  });
});

describe("contextPressure", () => {
  const usage = (contextTokens: number | null) => ({
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 1,
    costUsd: null,
    contextTokens,
  });
  it("is ok, high from 80% and full from 95%, and unknown without a context figure", () => {
    expect(contextPressure(usage(100_000), 200_000)).toEqual({ ratio: 0.5, level: "ok", known: true });
    expect(contextPressure(usage(160_000), 200_000).level).toBe("high");
    expect(contextPressure(usage(190_000), 200_000).level).toBe("full");
    expect(contextPressure(usage(null), 200_000)).toEqual({ ratio: 0, level: "ok", known: false });
    expect(contextPressure(null, 200_000).known).toBe(false);
  });
});
