import { describe, expect, it } from "vitest";
import { newRequestId } from "./request-id.js";

describe("request ids", () => {
  it("are req_ and 16 hex digits, distinct across several pools", () => {
    const ids = Array.from({ length: 5000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
