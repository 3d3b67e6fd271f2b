// The memory index's background load at a gateway start, over a searcher whose refresh the test settles: /ready's
// check says "loading" until it ends, names the error of a failed load, and recovers once a retry succeeds.
import { describe, expect, it } from "vitest";
import { createLogger } from "../../shared/logger.js";
import { loadMemoryIndex } from "./index-load.js";

/** A searcher whose every refresh waits for the test to settle it. */
function pendingSearcher() {
  const calls: { resolve: () => void; reject: (error: Error) => void }[] = [];
  return {
    calls,
    searcher: {
      size: 42,
      refresh: () => new Promise<void>((resolve, reject) => calls.push({ resolve, reject })),
    },
  };
}

const recordingLogger = () => {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger({ write: (line) => lines.push(JSON.parse(line)), level: "info" }) };
};

describe("memory index load", () => {
  it("is not ready while the index loads, and ready once it has, saying how many pages", async () => {
    const { calls, searcher } = pendingSearcher();
    const { lines, logger } = recordingLogger();
    const load = loadMemoryIndex(searcher, logger);
    await expect(load.check()).rejects.toThrow("the memory index is loading");
    calls[0]?.resolve();
    await load.settled;
    await expect(load.check()).resolves.toBeUndefined();
    expect(lines).toEqual([expect.objectContaining({ msg: "memory index ready", pages: 42 })]);
    expect(calls).toHaveLength(1);
  });

  it("names a failed load's error, logs it, and is ready again once a retry succeeds", async () => {
    const { calls, searcher } = pendingSearcher();
    const { lines, logger } = recordingLogger();
    const load = loadMemoryIndex(searcher, logger);
    calls[0]?.reject(new Error("database is locked"));
    await load.settled;
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "memory index could not load",
        error: "database is locked",
      }),
    ]);
    const retry = load.check();
    calls[1]?.reject(new Error("still locked"));
    await expect(retry).rejects.toThrow("the memory index could not load: still locked");
    const again = load.check();
    calls[2]?.resolve();
    await expect(again).resolves.toBeUndefined();
    // Ready now: the check no longer touches the index.
    await expect(load.check()).resolves.toBeUndefined();
    expect(calls).toHaveLength(3);
  });

  it("logs nothing for a load cut short by the gateway stopping", async () => {
    const { calls, searcher } = pendingSearcher();
    const { lines, logger } = recordingLogger();
    const load = loadMemoryIndex(searcher, logger);
    load.stop();
    calls[0]?.reject(new Error("The database connection is not open"));
    await load.settled;
    expect(lines).toEqual([]);
  });
});
