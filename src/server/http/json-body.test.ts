import { describe, expect, it } from "vitest";
import { cpuMs } from "../../../test/cpu-time.js";
import { jsonDepthExceeds } from "./json-body.js";

describe("JSON nesting bound", () => {
  it("counts arrays and objects outside strings, escapes included", () => {
    expect(jsonDepthExceeds(`{"a":[{"b":[]}]}`, 4)).toBe(false);
    expect(jsonDepthExceeds(`{"a":[{"b":[[]]}]}`, 4)).toBe(true);
    expect(jsonDepthExceeds(`{"a":"[[[[[[[[","b":"\\"[[[[[[["}`, 1)).toBe(false);
    expect(jsonDepthExceeds(`[${"[]".repeat(10_000)}]`, 2)).toBe(false);
  });

  it("checks 1 MiB of nesting in under 100 ms, without recursion", () => {
    const MiB = 1024 * 1024;
    expect(cpuMs(() => jsonDepthExceeds("[".repeat(MiB), 64))).toBeLessThan(100);
    expect(cpuMs(() => jsonDepthExceeds(`"${"[".repeat(MiB)}`, 64))).toBeLessThan(100);
    expect(jsonDepthExceeds(`${"[".repeat(MiB / 2)}${"]".repeat(MiB / 2)}`, 64)).toBe(true);
  });
});
