// Signals ivoai receives during a launch, from the first step to the last: before the agent exists a
// stopping signal ends the launch; while the agent runs every signal is passed on to it (TERM and HUP
// escalate to KILL after a bound); after it has exited nothing is left to do, so nothing is ignored forever.
import type { ChildProcess } from "node:child_process";
import { constants as osConstants } from "node:os";

/** Signals that, sent to ivoai alone, are passed on to the agent. */
const FORWARDED: NodeJS.Signals[] = [
  "SIGINT",
  "SIGTERM",
  "SIGHUP",
  "SIGQUIT",
  "SIGWINCH",
  "SIGCONT",
  "SIGUSR1",
  "SIGUSR2",
];

/** Signals that end the launch when no agent runs yet. */
const STOPPING = new Set<NodeJS.Signals>(["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"]);

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WatchedAgent {
  /** True once the process runs, false when it could not be started. */
  spawned: Promise<boolean>;
  /** Settles when a started agent exits, however early that happens. */
  exited: Promise<AgentExit>;
}

export interface SignalRelay {
  /** Resolves with the first stopping signal that arrived before an agent was watched. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** Rejects with `LaunchStopped` as soon as a stopping signal arrives, else settles like `work`. */
  unlessStopped<T>(work: Promise<T>): Promise<T>;
  /** Throws `LaunchStopped` if a stopping signal already arrived. */
  check(): void;
  /** Watches a child from now on; call it in the same tick as `spawn`, so no event can be missed. */
  watch(child: ChildProcess): WatchedAgent;
  /** Removes every handler (the launch is over). */
  dispose(): void;
}

/** The launch was stopped by a signal before the agent started. */
export class LaunchStopped extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`stopped by ${signal} before the agent started`);
  }
}

/** The shell's convention for death by a signal: 128 + its number. */
export function signalStatus(signal: NodeJS.Signals): number {
  return 128 + ((osConstants.signals as Record<string, number>)[signal] ?? 1);
}

export function createSignalRelay(killAfterMs: number): SignalRelay {
  let child: ChildProcess | undefined;
  let over = false;
  let stopSignal: NodeJS.Signals | undefined;
  let escalation: NodeJS.Timeout | undefined;
  let announceStop: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    announceStop = resolve;
  });
  const running = () => child !== undefined && !over && child.exitCode === null && child.signalCode === null;

  const handlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of FORWARDED) {
    const handler = () => {
      if (child === undefined) {
        if (STOPPING.has(signal) && stopSignal === undefined) {
          stopSignal = signal;
          announceStop(signal);
        }
        return;
      }
      if (!running()) return;
      child.kill(signal);
      if ((signal === "SIGTERM" || signal === "SIGHUP") && !escalation) {
        escalation = setTimeout(() => {
          if (running()) child?.kill("SIGKILL");
        }, killAfterMs);
      }
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  // ^Z sent to ivoai alone: stop the agent, then ourselves; SIGCONT (forwarded above) resumes both.
  const onStop = () => {
    if (running()) child?.kill("SIGTSTP");
    process.kill(process.pid, "SIGSTOP");
  };
  process.on("SIGTSTP", onStop);

  const check = () => {
    if (stopSignal !== undefined) throw new LaunchStopped(stopSignal);
  };

  return {
    stopped,
    check,
    unlessStopped(work) {
      check();
      return Promise.race([
        work,
        stopped.then((signal) => {
          throw new LaunchStopped(signal);
        }),
      ]);
    },
    watch(watched) {
      child = watched;
      const spawned = new Promise<boolean>((resolve) => {
        watched.once("spawn", () => resolve(true));
        // `on`, not `once`: a later 'error' (a signal that cannot be delivered) must not go unhandled.
        watched.on("error", () => resolve(false));
      });
      const exited = new Promise<AgentExit>((resolve) => {
        watched.once("exit", (code, signal) => {
          over = true;
          clearTimeout(escalation);
          resolve({ code, signal });
        });
      });
      return { spawned, exited };
    },
    dispose() {
      over = true;
      clearTimeout(escalation);
      for (const [signal, handler] of handlers) process.off(signal, handler);
      process.off("SIGTSTP", onStop);
    },
  };
}
