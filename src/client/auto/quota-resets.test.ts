import { describe, expect, it } from "vitest";
import type { QuotaSnapshot } from "./contracts.js";
import { describeQuotaResets, quotaResetOf, untilText } from "./quota-resets.js";

const NOW = new Date("2026-12-03T18:50:00.000Z");
const rule = { headroomPercent: 10, now: NOW };
const snap = (fields: Partial<QuotaSnapshot>): QuotaSnapshot => ({
  executor: "codex",
  window: "primary",
  used_percent: 10,
  status: null,
  resets_at: "2026-12-03T23:00:00.000Z",
  observed_at: "2026-12-03T18:45:00.000Z",
  source: "app-server",
  ...fields,
});

describe("quotaResetOf", () => {
  it("is null for an executor admission lets through", () => {
    expect(quotaResetOf("codex", [snap({})], rule)).toBeNull();
  });

  it("is the latest reset of the windows that refuse, not of the ones with room", () => {
    const reset = quotaResetOf(
      "codex",
      [
        snap({
          window: "turn",
          used_percent: 100,
          status: "rejected",
          resets_at: "2026-12-03T21:00:00.000Z",
        }),
        snap({ window: "secondary", used_percent: 95, resets_at: "2026-12-04T01:00:00.000Z" }),
        snap({ window: "primary", used_percent: 20, resets_at: "2026-12-09T00:00:00.000Z" }),
        snap({ executor: "claude", used_percent: 100, resets_at: "2026-12-10T00:00:00.000Z" }),
      ],
      rule,
    );
    expect(reset).toMatchObject({ executor: "codex", resets_at: "2026-12-04T01:00:00.000Z" });
    expect(reset?.reason).toMatch(/^codex /);
  });

  it("has no reset time when a refusing window did not give one", () => {
    const reset = quotaResetOf(
      "claude",
      [snap({ executor: "claude", status: "rejected", resets_at: null })],
      rule,
    );
    expect(reset).toMatchObject({ executor: "claude", resets_at: null });
  });
});

describe("describeQuotaResets", () => {
  it("names each executor's reset as an ISO time and as a duration from now", () => {
    expect(
      describeQuotaResets(
        [
          { executor: "codex", resets_at: "2026-12-03T21:00:00.000Z", reason: "r" },
          { executor: "claude", resets_at: null, reason: "r" },
        ],
        NOW,
      ),
    ).toBe("codex resets at 2026-12-03T21:00:00.000Z (in 2h 10m); claude: reset time unknown");
    expect(describeQuotaResets([], NOW)).toBe("");
  });

  it("rounds down to whole minutes and says days for long windows", () => {
    expect(untilText(30_000)).toBe("in under a minute");
    expect(untilText(5 * 60_000 + 59_000)).toBe("in 5m");
    expect(untilText((2 * 60 + 10) * 60_000)).toBe("in 2h 10m");
    expect(untilText((3 * 24 + 4) * 3_600_000)).toBe("in 3d 4h");
  });
});
