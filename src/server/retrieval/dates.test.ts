import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { dateExpressionTerms, dayTerms, parseDay, withPeriods } from "./dates.js";

const day = (iso: string) => parseDay(iso) as number;
const terms = (text: string, today: string) => [...dateExpressionTerms(text, day(today)).keys()];

describe("date terms", () => {
  it("gives a dated passage its year, month and day", () => {
    expect(dayTerms(day("2026-05-03T18:30:00Z"))).toEqual(["date:2026", "date:2026-05", "date:2026-05-03"]);
    expect(parseDay("not a date")).toBeUndefined();
    expect(withPeriods("date:2026-05-03")).toEqual(["date:2026", "date:2026-05", "date:2026-05-03"]);
  });

  it("reads a month without a year as the latest one not after today", () => {
    expect(terms("what did we decide in May?", "2026-06-10")).toEqual(["date:2026-05"]);
    expect(terms("what did we decide in May?", "2026-03-10")).toEqual(["date:2025-05"]);
    expect(terms("on May 3, 2024 and 12 de maio", "2026-06-10")).toEqual([
      "date:2024-05-03",
      "date:2026-05-12",
    ]);
    // "may" the verb is no date.
    expect(terms("we may ship it", "2026-06-10")).toEqual([]);
  });

  it("resolves relative expressions against the reference day (weeks start on Monday)", () => {
    // 2026-06-10 is a Wednesday: last week is June 1–7.
    const lastWeek = dateExpressionTerms("what happened last week", day("2026-06-10"));
    expect([...lastWeek.keys()]).toEqual([
      "date:2026-06-01",
      "date:2026-06-02",
      "date:2026-06-03",
      "date:2026-06-04",
      "date:2026-06-05",
      "date:2026-06-06",
      "date:2026-06-07",
    ]);
    expect([...lastWeek.values()].reduce((sum, weight) => sum + weight, 0)).toBeCloseTo(1);
    expect(terms("yesterday", "2026-03-01")).toEqual(["date:2026-02-28"]);
    expect(terms("last month", "2026-01-15")).toEqual(["date:2025-12"]);
    expect(terms("shipped 2026-05-03, planned in 2027", "2026-06-10")).toEqual([
      "date:2026-05-03",
      "date:2027",
    ]);
  });

  it("reads a 1 MiB page of digits, month names and long runs of spaces in linear time", () => {
    const hostile = [
      `1${" ".repeat(1 << 18)}`,
      `may${" ".repeat(1 << 18)},`,
      "1 ".repeat(1 << 17),
      "may 1 ".repeat(1 << 15),
    ].join("x");
    let found = new Map<string, number>();
    expect(cpuMs(() => (found = dateExpressionTerms(hostile, day("2026-06-10"))), 1)).toBeLessThan(2000);
    // "may 1" is a day of May each time: one term, weighed once per expression.
    expect(found.get("date:2026-05-01")).toBeGreaterThan(1000);
  });
});
