import { describe, expect, it } from "vitest";
import { z } from "zod";
import { durationSetting, sizeSetting } from "./setting-types.js";

const schema = z.object({ ttl: durationSetting("7d").prefault("7d"), body: sizeSetting().prefault("4MiB") });

describe("setting types", () => {
  it("parse durations and sizes once into milliseconds and bytes, defaults included", () => {
    expect(schema.parse({})).toEqual({ ttl: 604_800_000, body: 4 * 1024 * 1024 });
    expect(schema.parse({ ttl: "90s", body: 1000 })).toEqual({ ttl: 90_000, body: 1000 });
    expect(schema.parse({ ttl: "2h", body: "10MB" })).toEqual({ ttl: 7_200_000, body: 10 * 1024 * 1024 });
    expect(schema.parse({ body: "1g" })).toEqual({ ttl: 604_800_000, body: 1024 ** 3 });
    expect(schema.parse({ ttl: "10m", body: "512 KiB" })).toEqual({ ttl: 600_000, body: 524_288 });
  });

  it("write back the form people type", () => {
    expect(z.encode(schema, { ttl: 604_800_000, body: 4 * 1024 * 1024 })).toEqual({
      ttl: "7d",
      body: "4MiB",
    });
    expect(z.encode(schema, { ttl: 90_000, body: 1000 })).toEqual({ ttl: "90s", body: 1000 });
    for (const ttl of ["1s", "59s", "61m", "25h", "400d"])
      expect(z.encode(schema, schema.parse({ ttl })).ttl).toBe(ttl);
  });

  it("refuse what they cannot read, saying what to write", () => {
    for (const [input, message] of [
      [{ ttl: "7 days" }, "'7 days' is not a duration: use a number and a unit s, m, h or d, like 7d"],
      [{ ttl: "0s" }, "'0s' is not a duration"],
      [{ ttl: "1e3s" }, "'1e3s' is not a duration"],
      [{ ttl: 60 }, "expected string"],
      [{ body: "4 megabytes" }, "'4 megabytes' is not a size"],
      [{ body: 0 }, "0 is not a size"],
      [{ body: 1.5 }, "1.5 is not a size"],
      [{ body: "0x10" }, "'0x10' is not a size"],
    ] as const) {
      const result = schema.safeParse(input);
      expect(result.success, JSON.stringify(input)).toBe(false);
      expect(result.error?.issues[0]?.message).toContain(message);
      expect(result.error?.issues[0]?.path).toEqual([Object.keys(input)[0]]);
    }
  });
});
