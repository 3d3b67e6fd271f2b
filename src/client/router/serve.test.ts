// router serve's stop is bounded: a router whose close never settles is left behind after the deadline, and a
// second signal returns at once, even when it arrives together with the first.
import { describe, expect, it } from "vitest";
import type { RunningRouter } from "./router.js";
import { type SignalSource, serveUntilStopped } from "./serve.js";

/** A router whose close() never settles, as when an upstream never answers. */
function stuckRouter(): RunningRouter & { closes: number } {
  const router = {
    closes: 0,
    url: "http://127.0.0.1:1",
    endpoints: { context: "", memory: "", hooks: "" },
    capability: "",
    readOnlyCapability: "",
    userEndpoints: [],
    expiresAt: "",
    sources: [],
    close: () => {
      router.closes += 1;
      return new Promise<void>(() => undefined);
    },
  };
  return router;
}

/** A signal source the test fires by hand. */
function manualSignals(): SignalSource & { fire(signal: NodeJS.Signals): void; listeners: number } {
  const listeners = new Set<(signal: NodeJS.Signals) => void>();
  return {
    on: (listener) => void listeners.add(listener),
    off: (listener) => void listeners.delete(listener),
    fire: (signal) => {
      for (const listener of listeners) listener(signal);
    },
    get listeners() {
      return listeners.size;
    },
  };
}

describe("serveUntilStopped", () => {
  it("returns after the deadline when the router never closes, saying so", async () => {
    const router = stuckRouter();
    const notices: string[] = [];
    const signals = manualSignals();
    const status = await serveUntilStopped(router, {
      stopSignal: Promise.resolve("SIGTERM"),
      notice: (message) => notices.push(message),
      deadlineMs: 20,
      signals,
    });
    expect(status).toBe(0);
    expect(router.closes).toBe(1);
    expect(notices).toEqual(["ivoai: the router did not close within 20 ms; stopping anyway"]);
    expect(signals.listeners).toBe(0);
  });

  it("returns at once on a second signal, with 128 + its number", async () => {
    const router = stuckRouter();
    const signals = manualSignals();
    let stop: (signal: NodeJS.Signals) => void = () => undefined;
    const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
      stop = resolve;
    });
    const notices: string[] = [];
    // An hour: only the second signal can end this wait within the test's timeout.
    const serving = serveUntilStopped(router, {
      stopSignal,
      notice: (message) => notices.push(message),
      deadlineMs: 3_600_000,
      signals,
    });
    // Both signals arrive before the stop is even noticed.
    stop("SIGTERM");
    signals.fire("SIGTERM");
    signals.fire("SIGINT");
    expect(await serving).toBe(130);
    expect(notices).toEqual(["ivoai: SIGINT again: stopping without waiting for the router to close"]);
    expect(signals.listeners).toBe(0);
  });

  it("counts a stop request that came before it listened as the first signal", async () => {
    const router = stuckRouter();
    const signals = manualSignals();
    const serving = serveUntilStopped(router, {
      stopSignal: Promise.resolve("SIGINT"),
      notice: () => undefined,
      deadlineMs: 3_600_000,
      signals,
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(router.closes).toBe(1);
    signals.fire("SIGTERM");
    expect(await serving).toBe(143);
  });
});
