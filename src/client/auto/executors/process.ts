// One official CLI process for one turn: structured argv in its own process group, stdout read as bounded
// lines, stderr kept as a bounded tail, and every ending (exit, timeout, cancel, a stop asked by the parser)
// finished by reaping the whole group: TERM, then KILL after a bound.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Longest stdout line parsed; a longer one is skipped, not fatal. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;
/** Stdout read per turn; past it the rest is ignored (the process still runs to its end). */
export const MAX_STDOUT_BYTES = 64 * 1024 * 1024;
/** Stderr kept for the error line. */
export const STDERR_TAIL_BYTES = 4 * 1024;
/** How long a group that survived KILL is waited for before giving up (an unkillable process). */
const REAP_BOUND_MS = 2_000;
const REAP_POLL_MS = 15;

export type ProcessEnding = "exit" | "timeout" | "cancelled" | "stopped" | "spawn_error";

export interface ProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then closed; null leaves stdin ignored. */
  stdin: string | null;
  timeoutMs: number;
  killAfterMs: number;
  signal?: AbortSignal | undefined;
  /** One complete stdout line (without the newline). */
  onLine(line: string): void;
  /** The CLI started: its pid, which is also its process group's id. */
  onSpawn?: (pid: number) => void;
}

export interface ProcessResult {
  ending: ProcessEnding;
  exitCode: number | null;
  exitSignal: string | null;
  /** Why spawn failed (spawn_error only). */
  spawnError: string | null;
  stderrTail: string;
  skippedLines: number;
  durationMs: number;
}

export interface RunningProcess {
  /** Ends the turn now (a hard limit seen mid-turn): TERM the group, KILL after the bound. */
  stop(): void;
  readonly done: Promise<ProcessResult>;
}

/** Spawns the CLI; `done` settles only after the process group is gone. Never rejects. */
export function runProcess(spec: ProcessSpec): RunningProcess {
  const started = performance.now();
  let ending: ProcessEnding | null = null;
  let termSent = false;
  let killTimer: NodeJS.Timeout | undefined;
  let pgid: number | undefined;

  const signalGroup = (signal: NodeJS.Signals) => {
    if (pgid === undefined) return;
    try {
      process.kill(-pgid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  };
  const terminate = () => {
    if (termSent) return;
    termSent = true;
    signalGroup("SIGTERM");
    killTimer = setTimeout(() => signalGroup("SIGKILL"), spec.killAfterMs);
  };
  const end = (why: ProcessEnding) => {
    if (ending === null) ending = why;
    terminate();
  };

  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.stdin === null ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
  } catch (error) {
    // Arguments spawn refuses outright (a NUL byte in argv, say) end the turn like a missing executable.
    const spawnError = error instanceof Error ? error.message : String(error);
    const result: ProcessResult = {
      ending: "spawn_error",
      exitCode: null,
      exitSignal: null,
      spawnError,
      stderrTail: "",
      skippedLines: 0,
      durationMs: 0,
    };
    return { stop: () => undefined, done: Promise.resolve(result) };
  }
  pgid = child.pid;
  if (pgid !== undefined) spec.onSpawn?.(pgid);

  const lines = createLineSplitter(spec.onLine);
  child.stdout?.on("data", (chunk: Buffer) => lines.push(chunk));
  let stderr = Buffer.alloc(0);
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = Buffer.concat([stderr, chunk]);
    if (stderr.length > STDERR_TAIL_BYTES) stderr = stderr.subarray(stderr.length - STDERR_TAIL_BYTES);
  });
  if (spec.stdin !== null && child.stdin) {
    // A CLI that exits before reading its prompt closes the pipe: that is its exit to report, not ours.
    child.stdin.on("error", () => undefined);
    child.stdin.end(spec.stdin);
  }

  const timeout = setTimeout(() => end("timeout"), spec.timeoutMs);
  const onAbort = () => end("cancelled");
  if (spec.signal?.aborted) queueMicrotask(onAbort);
  else spec.signal?.addEventListener("abort", onAbort, { once: true });

  const done = new Promise<ProcessResult>((resolve) => {
    let spawnError: string | null = null;
    let finishing = false;
    const finish = async (exitCode: number | null, exitSignal: string | null) => {
      if (finishing) return;
      finishing = true;
      clearTimeout(timeout);
      spec.signal?.removeEventListener("abort", onAbort);
      if (pgid !== undefined)
        await reapGroup(pgid, terminate, spec.killAfterMs, () => signalGroup("SIGKILL"));
      clearTimeout(killTimer);
      await streamsClosed(child.stdout, child.stderr);
      lines.flush();
      resolve({
        ending: spawnError !== null ? "spawn_error" : (ending ?? "exit"),
        exitCode,
        exitSignal,
        spawnError,
        stderrTail: stderr.toString("utf8"),
        skippedLines: lines.skipped(),
        durationMs: Math.round(performance.now() - started),
      });
    };
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a signal that could not be delivered; the exit still comes
      spawnError = error.code ?? error.message;
      void finish(null, null);
    });
    child.once("exit", (code, signal) => void finish(code, signal));
  });

  return { stop: () => end("stopped"), done };
}

/** Waits until no live process is left in the group, ending the survivors (TERM, then KILL). */
async function reapGroup(
  pgid: number,
  terminate: () => void,
  killAfterMs: number,
  kill: () => void,
): Promise<void> {
  if (!groupAlive(pgid)) return;
  terminate();
  const deadline = Date.now() + killAfterMs;
  while (groupAlive(pgid) && Date.now() < deadline) await pause(REAP_POLL_MS);
  if (!groupAlive(pgid)) return;
  kill();
  const last = Date.now() + REAP_BOUND_MS;
  while (groupAlive(pgid) && Date.now() < last) await pause(REAP_POLL_MS);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether any process of the group still runs. On Linux zombies count as gone: orphans are reparented to
 * a PID 1 that may never reap them (containers), and a zombie holds no resources worth waiting for.
 */
export function groupAlive(pgid: number): boolean {
  // Fast path: no member at all (zombies included) — the usual case once the CLI exited and was reaped.
  if (!killProbe(pgid)) return false;
  if (process.platform === "linux") {
    let entries: string[];
    try {
      entries = readdirSync("/proc");
    } catch {
      return killProbe(pgid);
    }
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = procStat(Number(entry));
      if (stat && stat.pgid === pgid && stat.state !== "Z" && stat.state !== "X") return true;
    }
    return false;
  }
  return killProbe(pgid);
}

/** State and process group of a Linux process from /proc/PID/stat, or null when it does not exist. */
export function procStat(pid: number): { state: string; pgid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: fields resume after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0] ?? "", pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

function killProbe(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function streamsClosed(...streams: (NodeJS.ReadableStream | null)[]): Promise<void> {
  return Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          if (!stream || (stream as { closed?: boolean }).closed) return resolve();
          stream.once("close", () => resolve());
          // The group is gone, so every writer is: the pipe closes at once. Bound it anyway.
          setTimeout(resolve, 1_000).unref();
        }),
    ),
  ).then(() => undefined);
}

interface LineSplitter {
  push(chunk: Buffer): void;
  flush(): void;
  skipped(): number;
}

/** Splits a byte stream into UTF-8 lines, skipping any line longer than MAX_LINE_BYTES. */
export function createLineSplitter(
  onLine: (line: string) => void,
  maxLine = MAX_LINE_BYTES,
  maxTotal = MAX_STDOUT_BYTES,
): LineSplitter {
  let parts: Buffer[] = [];
  let pending = 0;
  let overlong = false;
  let total = 0;
  let skipped = 0;
  const emit = (line: Buffer) => {
    const text = line.toString("utf8").replace(/\r$/, "");
    if (text.trim() !== "") onLine(text);
  };
  return {
    push(chunk) {
      if (total >= maxTotal) return;
      const room = maxTotal - total;
      const data = chunk.length > room ? chunk.subarray(0, room) : chunk;
      total += data.length;
      let start = 0;
      for (;;) {
        const newline = data.indexOf(10, start);
        const piece = data.subarray(start, newline === -1 ? data.length : newline);
        if (!overlong) {
          if (pending + piece.length > maxLine) {
            overlong = true;
            parts = [];
            pending = 0;
          } else if (piece.length > 0) {
            parts.push(piece);
            pending += piece.length;
          }
        }
        if (newline === -1) break;
        if (overlong) skipped += 1;
        else emit(Buffer.concat(parts));
        parts = [];
        pending = 0;
        overlong = false;
        start = newline + 1;
      }
    },
    flush() {
      if (overlong) skipped += 1;
      else if (pending > 0) emit(Buffer.concat(parts));
      parts = [];
      pending = 0;
      overlong = false;
    },
    skipped: () => skipped,
  };
}
