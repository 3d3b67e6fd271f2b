import { describe, expect, it } from "vitest";
import { parseQuotaSnapshot } from "./snapshot.js";

const good = {
  executor: "claude",
  window: "five_hour",
  used_percent: 42.5,
  status: "allowed",
  resets_at: "2026-12-01T20:00:00.000Z",
  observed_at: "2026-12-01T17:00:00.000Z",
  source: "statusline",
};

describe("parseQuotaSnapshot", () => {
  it("keeps exactly the known fields of a valid snapshot", () => {
    expect(parseQuotaSnapshot({ ...good, extra: "dropped" })).toEqual(good);
    expect(parseQuotaSnapshot({ ...good, used_percent: null, status: null, resets_at: null })).toMatchObject({
      used_percent: null,
      status: null,
      resets_at: null,
    });
  });

  it.each([
    ["executor", { executor: "gemini" }],
    ["window", { window: "w".repeat(41) }],
    ["used_percent", { used_percent: 101 }],
    ["used_percent", { used_percent: Number.NaN }],
    ["used_percent", { used_percent: "50" }],
    ["status", { status: "blocked" }],
    ["resets_at", { resets_at: 5 }],
    ["observed_at", { observed_at: null }],
    ["source", { source: "guess" }],
  ])("refuses a bad %s", (field, change) => {
    expect(() => parseQuotaSnapshot({ ...good, ...change })).toThrow(`invalid ${field}`);
  });

  it("refuses what is not an object", () => {
    for (const value of [null, [], "x", 3])
      expect(() => parseQuotaSnapshot(value)).toThrow("must be an object");
  });
});
