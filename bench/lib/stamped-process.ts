// A child process whose stderr lines are stamped with the wall clock the moment they reach this process, for
// benches that measure how soon something a child records shows up on the reading end of its pipe.
import { type ChildProcess, spawn } from "node:child_process";

/** One stderr line and when its newline arrived (Date.now(): the clock a child's ISO `at` fields use). */
export interface StampedLine {
  text: string;
  arrivedAt: number;
}

export interface StampedProcess {
  child: ChildProcess;
  /** Every complete stderr line so far, in arrival order. */
  lines: StampedLine[];
  stdout(): string;
  /** Resolves once `done(lines)` holds; rejects if the child exits first or `timeoutMs` passes, saying what it saw. */
  until(what: string, done: (lines: readonly StampedLine[]) => boolean, timeoutMs?: number): Promise<void>;
  /** The exit, and the wall time from spawn to it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; wallMs: number }>;
}

/** Spawns `command args` with stdin closed, stdout collected and stderr split into stamped lines. */
export function spawnStamped(command: string, args: string[], env: NodeJS.ProcessEnv): StampedProcess {
  const began = performance.now();
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const lines: StampedLine[] = [];
  const waiters = new Set<() => void>();
  let partial = "";
  let out = "";
  let closed = false;
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    const arrivedAt = Date.now();
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    for (const text of parts) lines.push({ text, arrivedAt });
    for (const wake of waiters) wake();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; wallMs: number }>(
    (resolve) =>
      child.once("close", (code, signal) => {
        closed = true;
        resolve({ code, signal, wallMs: performance.now() - began });
        for (const wake of waiters) wake();
      }),
  );
  const seen = () => lines.map((line) => line.text).join("\n") || "(no stderr)";
  return {
    child,
    lines,
    stdout: () => out,
    exited,
    until(what, done, timeoutMs = 120_000) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`gave up after ${timeoutMs} ms waiting for ${what}`)),
          timeoutMs,
        );
        const finish = (error?: Error) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(new Error(`${error.message}; stderr so far:\n${seen()}`));
          else resolve();
        };
        const check = () => {
          if (done(lines)) finish();
          else if (closed)
            finish(new Error(`the process exited (${child.exitCode ?? child.signalCode}) before ${what}`));
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Milliseconds covered by at least one of `intervals` ([start, end] pairs): parallel spans counted once. */
export function unionMs(intervals: readonly (readonly [number, number])[]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [from, to] of sorted) {
    if (to <= end) continue;
    total += to - Math.max(from, end);
    end = to;
  }
  return total;
}
