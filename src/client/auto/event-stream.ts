// Where a session's events go: the caller's listener (headless lines, --json JSON Lines, the frontend) and a
// private append-only file beside the session record that `ivoai session watch` follows. Each event is one
// write of one line with O_APPEND, so a reader never sees half an event and a crash loses at most the last.
import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { AutoState } from "../session/auto-state.js";
import {
  AUTO_EVENT_VERSION,
  type AutoEvent,
  type AutoEventBody,
  createEventDiffer,
  type Progress,
  progressOf,
} from "./events.js";

/** An events file stops growing here (a runaway session cannot fill the disk); the session goes on. */
export const MAX_EVENTS_FILE_BYTES = 4 * 1024 * 1024;

export function eventsFile(stateDir: string, sessionId: string): string {
  return path.join(stateDir, "sessions", `${sessionId}.events.jsonl`);
}

export interface EventStream {
  /** Emits what changed since the last state seen (called with every recorded change). */
  observe(state: AutoState): void;
  /** Emits one event the state does not carry (the session's start and end). */
  emit(body: AutoEventBody): AutoEvent;
  /** Starts the heartbeat: while nothing else happens for `intervalMs`, one heartbeat event says where it is. */
  heartbeat(intervalMs: number, state: () => AutoState): void;
  /** Where `state`'s plan stands, timed from this stream's start. */
  progress(state: AutoState): Progress;
  close(): void;
}

export interface EventStreamOptions {
  file: string | null;
  sessionId: string;
  /** The state already announced: only later changes are events. */
  initial: AutoState;
  /** The last seq already written (a resumed session goes on counting). */
  lastSeq: number;
  startedAt: number;
  listener?: (event: AutoEvent) => void;
}

export function openEventStream(options: EventStreamOptions): EventStream {
  const differ = createEventDiffer(options.initial, options.startedAt);
  let seq = options.lastSeq;
  let fd: number | null = options.file ? openEvents(options.file) : null;
  let lastAt = performance.now();
  let timer: NodeJS.Timeout | null = null;

  const write = (event: AutoEvent) => {
    if (fd === null) return;
    const line = Buffer.from(`${JSON.stringify(event)}\n`);
    try {
      // The last 64 KiB are kept for the end of a run, so watchers always learn how it ended.
      const room = event.type === "session.ended" ? MAX_EVENTS_FILE_BYTES : MAX_EVENTS_FILE_BYTES - 64 * 1024;
      if (fstatSync(fd).size + line.length > room) {
        if (event.type === "session.ended") throw new Error("full");
        return;
      }
      writeSync(fd, line);
    } catch {
      // A full disk or the cap: watchers see the stream end; the session and its record go on.
      closeSync(fd);
      fd = null;
    }
  };
  const emit = (body: AutoEventBody): AutoEvent => {
    seq += 1;
    lastAt = performance.now();
    const event = {
      v: AUTO_EVENT_VERSION,
      seq,
      at: new Date().toISOString(),
      session: options.sessionId,
      ...body,
    } as AutoEvent;
    write(event);
    try {
      options.listener?.(event);
    } catch {
      // A listener that throws must not stop the engine that called it.
    }
    return event;
  };
  return {
    observe(state) {
      for (const body of differ.next(state)) emit(body);
    },
    emit,
    progress: (state) => progressOf(state, options.startedAt),
    heartbeat(intervalMs, state) {
      if (timer || intervalMs <= 0) return;
      timer = setInterval(
        () => {
          if (performance.now() - lastAt < intervalMs) return;
          const now = state();
          emit({ type: "heartbeat", phase: now.phase, progress: progressOf(now, options.startedAt) });
        },
        Math.max(50, Math.floor(intervalMs / 4)),
      );
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
      timer = null;
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** The seq of the last complete event in `file` (0 when there is none): a resumed session goes on from it. */
export async function lastEventSeq(file: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return 0;
  }
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  for (let index = lines.length - 1; index >= 0; index--) {
    try {
      const seq = (JSON.parse(lines[index] as string) as { seq?: unknown }).seq;
      if (typeof seq === "number") return seq;
    } catch {
      // A line cut by a crash: the one before it counts.
    }
  }
  return 0;
}

function openEvents(file: string): number | null {
  try {
    // O_NOFOLLOW: a symlink planted where the file goes is never written through.
    const fd = openSync(
      file,
      constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      // A line a power loss cut short ends here, so the next event starts a line of its own.
      const size = fstatSync(fd).size;
      const last = Buffer.alloc(1);
      if (size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a) writeSync(fd, "\n");
      return fd;
    } catch {
      closeSync(fd);
      return null;
    }
  } catch {
    return null;
  }
}
