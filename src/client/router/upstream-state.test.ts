// The upstream pool's breaker and failure rules, on plain values.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { classifyFailure, isOpenAt, nextBreaker, UpstreamAnswer, UpstreamError } from "./upstream-state.js";

const limits = { deadlineMs: 300, maxResponseBytes: 1024, breakerThreshold: 3, breakerCooldownMs: 30_000 };

describe("the circuit breaker", () => {
  it("opens on the third consecutive failure for the cooldown, and only then", () => {
    const first = nextBreaker(undefined, limits, 1_000);
    const second = nextBreaker(first, limits, 1_000);
    const third = nextBreaker(second, limits, 1_000);
    expect([first, second, third]).toEqual([
      { count: 1, openUntil: 0 },
      { count: 2, openUntil: 0 },
      { count: 3, openUntil: 31_000 },
    ]);
    const failures = new Map([["srv_a", third]]);
    expect(isOpenAt(failures, "srv_a", 30_999)).toBe(true);
    expect(isOpenAt(failures, "srv_a", 31_000)).toBe(false);
    expect(isOpenAt(failures, "srv_b", 0)).toBe(false);
  });
});

describe("classifyFailure", () => {
  it("keeps an answered JSON-RPC error as the upstream's answer only when answers are wanted", () => {
    const notFound = new McpError(-32002, "Resource not found");
    const answer = classifyFailure("alpha", notFound, true);
    expect(answer).toBeInstanceOf(UpstreamAnswer);
    expect([answer.message, (answer as UpstreamAnswer).code]).toEqual(["Resource not found", -32002]);
    expect(classifyFailure("alpha", notFound, false)).toMatchObject({ kind: "error" });
  });

  it("never takes the client's own timeout or closed connection for an answer", () => {
    for (const code of [ErrorCode.RequestTimeout, ErrorCode.ConnectionClosed]) {
      expect(classifyFailure("alpha", new McpError(code, "gone"), true)).toBeInstanceOf(UpstreamError);
    }
  });

  it("names the source, tells nonsense from a broken connection, and keeps the first line only", () => {
    expect(classifyFailure("alpha", new Error("Unexpected token < in JSON\nstack"), false)).toMatchObject({
      kind: "malformed",
      message: "alpha: Unexpected token < in JSON",
    });
    expect(classifyFailure("alpha", new Error("fetch failed: invalid ECONNREFUSED"), false)).toMatchObject({
      kind: "error",
    });
    const timeout = new UpstreamError("timeout", "alpha did not answer within 300 ms");
    expect(classifyFailure("alpha", timeout, true)).toBe(timeout);
  });
});
