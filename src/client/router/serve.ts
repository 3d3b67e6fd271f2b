// `ivoai router serve`'s stop: SIGINT/SIGTERM closes the router within a bounded time whatever its upstreams do
// (a stalled upstream once kept one alive for 29 minutes), and a second signal stops at once.
import { constants as osConstants } from "node:os";
import { waitAtMost } from "../../shared/timeout.js";
import type { RunningRouter } from "./router.js";

/** The longest a stop waits for the router to close before the command returns anyway. */
export const SHUTDOWN_DEADLINE_MS = 5_000;

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

export interface ServeStopOptions {
  /** Resolves on the first stop request (the CLI's SIGINT/SIGTERM). */
  stopSignal: Promise<NodeJS.Signals>;
  /** One line for the user when the router is left behind unclosed. */
  notice(message: string): void;
  deadlineMs?: number;
  /** Where stop signals come from (default: this process's SIGINT and SIGTERM). */
  signals?: SignalSource;
}

/** Subscribes to stop signals; the default is the process's. */
export interface SignalSource {
  on(listener: (signal: NodeJS.Signals) => void): void;
  off(listener: (signal: NodeJS.Signals) => void): void;
}

const processSignals: SignalSource = {
  on: (listener) => {
    for (const signal of STOP_SIGNALS) process.on(signal, listener);
  },
  off: (listener) => {
    for (const signal of STOP_SIGNALS) process.off(signal, listener);
  },
};

/**
 * Waits for the stop request, then closes the router. Returns the command's exit status: 0 once closed (or
 * once the deadline passed, with a notice), 128 + signal when a second signal cut the close short.
 */
export async function serveUntilStopped(router: RunningRouter, options: ServeStopOptions): Promise<number> {
  // Counted from now, so a second signal that arrives together with the first is not lost.
  let seen = 0;
  let second: (signal: NodeJS.Signals) => void = () => undefined;
  const again = new Promise<NodeJS.Signals>((resolve) => {
    second = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    seen += 1;
    if (seen >= 2) second(signal);
  };
  const signals = options.signals ?? processSignals;
  signals.on(onSignal);
  try {
    await options.stopSignal;
    // The stop request may have come before this listened (while the router started): it was the first.
    seen = Math.max(seen, 1);
    const closed = () => "closed" as const;
    const closing = router.close().then(closed, closed);
    const deadline = options.deadlineMs ?? SHUTDOWN_DEADLINE_MS;
    let outcome: "closed" | NodeJS.Signals | undefined;
    await waitAtMost(
      Promise.race([closing, again]).then((settled) => {
        outcome = settled;
      }),
      deadline,
    );
    if (outcome === "closed") return 0;
    if (outcome === undefined) {
      options.notice(`ivoai: the router did not close within ${deadline} ms; stopping anyway`);
      return 0;
    }
    options.notice(`ivoai: ${outcome} again: stopping without waiting for the router to close`);
    return 128 + ((osConstants.signals as Record<string, number>)[outcome] ?? 1);
  } finally {
    signals.off(onSignal);
  }
}
