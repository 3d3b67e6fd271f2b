import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { sameResource } from "./validate.js";

describe("resource indicators", () => {
  it("match the canonical URL with or without trailing slashes, in linear time", () => {
    const canonical = "https://ivoai.example.com/mcp";
    expect(sameResource(canonical, canonical)).toBe(true);
    expect(sameResource(`${canonical}//`, canonical)).toBe(true);
    expect(sameResource(`${canonical}/x`, canonical)).toBe(false);
    expect(sameResource(undefined, canonical)).toBe(false);
    const hostile = `${"/".repeat(1024 * 1024)}x`;
    expect(cpuMs(() => sameResource(hostile, canonical))).toBeLessThan(100);
  });
});
