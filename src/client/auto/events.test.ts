import { describe, expect, it } from "vitest";
import { initialAutoState } from "../session/auto-state.js";
import { progressOf } from "./events.js";

describe("progressOf", () => {
  it("times the session from its start on the monotonic clock the event stream is given", () => {
    const state = initialAutoState("codex", 2);
    const { elapsed_ms } = progressOf(state, performance.now() - 1_500);
    expect(elapsed_ms).toBeGreaterThanOrEqual(1_500);
    // Generous for a busy host, far below a wall-clock epoch mixed with a monotonic one.
    expect(elapsed_ms).toBeLessThan(600_000);
  });
});
