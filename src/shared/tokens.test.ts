import { describe, expect, it } from "vitest";
import { newId } from "./tokens.js";

describe("newId", () => {
  it("is the prefix and 16 hex digits, distinct across several pools of random bytes", () => {
    const ids = Array.from({ length: 5000 }, () => newId("req_"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
