import { describe, expect, it } from "vitest";
import { parseStatuslinePayload, resetTime, statusLineText } from "./claude-statusline.js";

const AT = new Date("2026-11-30T04:00:00.000Z");

describe("parseStatuslinePayload", () => {
  it("reads both windows with resets_at in epoch seconds (what Claude sends)", () => {
    const payload = {
      session_id: "abc",
      model: { id: "claude-sonnet-5", display_name: "Sonnet" },
      rate_limits: {
        five_hour: { used_percentage: 42.5, resets_at: 1796029200 },
        seven_day: { used_percentage: 100, resets_at: 1796500000 },
      },
    };
    expect(parseStatuslinePayload(payload, AT)).toEqual([
      {
        executor: "claude",
        window: "five_hour",
        used_percent: 42.5,
        status: null,
        resets_at: "2026-11-30T09:00:00.000Z",
        observed_at: "2026-11-30T04:00:00.000Z",
        source: "statusline",
      },
      {
        executor: "claude",
        window: "seven_day",
        used_percent: 100,
        status: "rejected",
        resets_at: new Date(1796500000 * 1000).toISOString(),
        observed_at: "2026-11-30T04:00:00.000Z",
        source: "statusline",
      },
    ]);
  });

  it("reads resets_at as an ISO string too", () => {
    const [five] = parseStatuslinePayload(
      { rate_limits: { five_hour: { used_percentage: 7, resets_at: "2026-11-30T09:00:00+01:00" } } },
      AT,
    );
    expect(five?.resets_at).toBe("2026-11-30T08:00:00.000Z");
  });

  it("ignores what is not a window: no rate_limits, bad numbers, bad names", () => {
    expect(parseStatuslinePayload({ model: {} }, AT)).toEqual([]);
    expect(parseStatuslinePayload(null, AT)).toEqual([]);
    expect(
      parseStatuslinePayload(
        {
          rate_limits: {
            five_hour: { used_percentage: "42" },
            "Bad Name": { used_percentage: 1 },
            seven_day: { used_percentage: 3, resets_at: "soon" },
          },
        },
        AT,
      ),
    ).toEqual([expect.objectContaining({ window: "seven_day", used_percent: 3, resets_at: null })]);
  });
});

describe("resetTime", () => {
  it("takes epoch seconds, epoch milliseconds, numeric strings and ISO", () => {
    expect(resetTime(1796029200)).toBe("2026-11-30T09:00:00.000Z");
    expect(resetTime(1796029200000)).toBe("2026-11-30T09:00:00.000Z");
    expect(resetTime("1796029200")).toBe("2026-11-30T09:00:00.000Z");
    expect(resetTime("2026-11-30T09:00:00Z")).toBe("2026-11-30T09:00:00.000Z");
    expect(resetTime(undefined)).toBeNull();
    expect(resetTime(Number.NaN)).toBeNull();
  });
});

describe("statusLineText", () => {
  it("is one short line", () => {
    const snapshots = parseStatuslinePayload(
      { rate_limits: { five_hour: { used_percentage: 42.4 }, seven_day: { used_percentage: 10 } } },
      AT,
    );
    expect(statusLineText(snapshots)).toBe("ivoai · 5h 42% · 7d 10%");
    expect(statusLineText([])).toBe("ivoai");
  });
});
