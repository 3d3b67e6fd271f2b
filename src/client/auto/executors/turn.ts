// The part of a turn both CLIs share: spawn, feed stdout's JSON lines to the vendor's parser, stop the
// group on a hard limit, and fold what was seen and how the process ended into one TurnOutcome.
import type {
  ExecutorEvent,
  ExecutorName,
  LimitInfo,
  TokenUsage,
  TurnOutcome,
  TurnRequest,
} from "../contracts.js";
import { safeLine } from "./limits.js";
import { type ProcessResult, runProcess } from "./process.js";

/** What a vendor parser reports while reading the stream. */
export interface TurnSink {
  thread(threadId: string): void;
  /** An assistant message; the last one is the final text unless `result` says otherwise. */
  text(text: string): void;
  tool(name: string, status: "started" | "completed" | "failed"): void;
  usage(usage: TokenUsage): void;
  emit(event: ExecutorEvent): void;
  /** A hard limit: recorded, announced, and the process group ended at once. */
  limit(limit: LimitInfo): void;
  /** The turn ended well, with this final text (null keeps the last assistant message). */
  completed(finalText: string | null, structured?: unknown): void;
  /** The turn ended badly (the CLI said so). */
  failed(message: string): void;
}

export interface CliInvocation {
  command: string;
  args: string[];
  /** The prompt goes on stdin, so no list-valued flag can swallow it and it never shows in `ps`. */
  stdin: string;
}

/** Handles one event of the stream. */
export type LineParser = (event: Record<string, unknown>, sink: TurnSink) => void;

export interface StreamFormat {
  parse: LineParser;
  /** The stream's top-level event types, so one written into another line can be recovered. */
  topLevelTypes: ReadonlySet<string>;
}

/** What one turn has seen so far; the sink fills it while the stream is read. */
interface TurnState {
  readonly request: TurnRequest;
  readonly started: number;
  firstEventMs: number | null;
  threadId: string | null;
  lastText: string;
  finalText: string | null;
  structured: unknown;
  usage: TokenUsage | null;
  limit: LimitInfo | null;
  completed: boolean;
  failure: string | null;
  /** Ends the process group (a hard limit); set once the process runs. */
  stop: () => void;
}

/** Runs one CLI turn to its end; never throws for executor failures. */
export async function runCliTurn(
  name: ExecutorName,
  request: TurnRequest,
  invocation: CliInvocation,
  format: StreamFormat,
): Promise<TurnOutcome> {
  const turn: TurnState = {
    request,
    started: performance.now(),
    firstEventMs: null,
    threadId: request.resumeThreadId,
    lastText: "",
    finalText: null,
    structured: undefined,
    usage: null,
    limit: null,
    completed: false,
    failure: null,
    stop: () => undefined,
  };
  const sink = createSink(turn);
  const reader = createJsonLineReader((event) => format.parse(event, sink), format.topLevelTypes);
  const running = startTurnProcess(request, invocation, reader);
  turn.stop = running.stop;
  return outcomeOf(name, turn, await running.done);
}

function emit(turn: TurnState, event: ExecutorEvent): void {
  turn.firstEventMs ??= Math.round(performance.now() - turn.started);
  try {
    turn.request.onEvent?.(event);
  } catch {
    // A listener's failure is the caller's; the turn goes on.
  }
}

function createSink(turn: TurnState): TurnSink {
  return {
    thread(id) {
      if (turn.threadId === id && turn.firstEventMs !== null) return;
      turn.threadId = id;
      emit(turn, { type: "thread", threadId: id });
    },
    text(text) {
      turn.lastText = text;
      emit(turn, { type: "text", text });
    },
    tool(toolName, status) {
      emit(turn, { type: "tool", name: toolName, status });
    },
    usage(value) {
      turn.usage = value;
      emit(turn, { type: "usage", usage: value });
    },
    emit: (event) => emit(turn, event),
    limit(value) {
      if (turn.limit) return;
      turn.limit = value;
      emit(turn, { type: "limit", limit: value });
      turn.stop();
    },
    completed(text, value) {
      turn.completed = true;
      if (text !== null) turn.finalText = text;
      if (value !== undefined) turn.structured = value;
    },
    failed(message) {
      turn.failure ??= safeLine(message);
    },
  };
}

function startTurnProcess(
  request: TurnRequest,
  invocation: CliInvocation,
  reader: (line: string) => void,
): ReturnType<typeof runProcess> {
  return runProcess({
    command: invocation.command,
    args: invocation.args,
    cwd: request.cwd,
    env: request.env,
    stdin: invocation.stdin,
    timeoutMs: request.timeoutMs,
    killAfterMs: request.killAfterMs,
    signal: request.signal,
    // Not an event of the turn (it sets no first-event time): the supervisor records whom to reap after a crash.
    onSpawn: (pid) => {
      try {
        request.onEvent?.({ type: "process", pid });
      } catch {
        // the caller's problem
      }
    },
    onLine: (line) => {
      try {
        reader(line);
      } catch {
        // A parser surprise on one line never ends the turn.
      }
    },
  });
}

/** What was seen and how the process ended, folded into one outcome. */
function outcomeOf(name: ExecutorName, turn: TurnState, result: ProcessResult): TurnOutcome {
  const text = turn.finalText ?? turn.lastText;
  const outcome: TurnOutcome = {
    status: "completed",
    threadId: turn.threadId,
    text,
    structured: null,
    limit: turn.limit,
    usage: turn.usage,
    exitCode: result.exitCode,
    exitSignal: result.exitSignal,
    error: null,
    durationMs: result.durationMs,
    firstEventMs: turn.firstEventMs,
  };
  if (turn.request.outputSchema) outcome.structured = turn.structured ?? parseJsonAnswer(text);
  const ending = endingOf(name, result, {
    limit: turn.limit,
    completed: turn.completed,
    failure: turn.failure,
  });
  outcome.status = ending.status;
  outcome.error = ending.error;
  return outcome;
}

function endingOf(
  name: ExecutorName,
  result: ProcessResult,
  seen: { limit: LimitInfo | null; completed: boolean; failure: string | null },
): Pick<TurnOutcome, "status" | "error"> {
  if (result.ending === "spawn_error")
    return { status: "crashed", error: `could not start ${name}: ${result.spawnError}` };
  if (seen.limit) return { status: "limit", error: seen.limit.message };
  if (result.ending === "cancelled") return { status: "cancelled", error: "cancelled" };
  if (result.ending === "timeout") return { status: "timeout", error: `${name} turn timed out` };
  if (seen.completed) return { status: "completed", error: null };
  if (seen.failure !== null) return { status: "failed", error: seen.failure };
  const how =
    result.exitSignal !== null ? `was killed by ${result.exitSignal}` : `exited with code ${result.exitCode}`;
  const said = lastLine(result.stderrTail);
  return { status: "crashed", error: safeLine(`${name} ${how} without a result${said ? `: ${said}` : ""}`) };
}

function lastLine(text: string): string {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  return lines[lines.length - 1] ?? "";
}

/** The answer as JSON when it is (optionally inside one fenced block), else null. */
export function parseJsonAnswer(text: string): unknown {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*)\n```$/.exec(trimmed);
  try {
    return JSON.parse(fenced?.[1] ?? trimmed) as unknown;
  } catch {
    return null;
  }
}

const MAX_FRAGMENT_CHARS = 1024 * 1024;

/**
 * Parses JSONL defensively: an event written into the middle of another line (seen with Claude Code's
 * rate_limit_event) is lifted out and the rest of the line parsed, or kept to be joined with the next line.
 */
export function createJsonLineReader(
  onEvent: (event: Record<string, unknown>) => void,
  topLevelTypes: ReadonlySet<string>,
): (line: string) => void {
  let fragment = "";
  const accept = (values: unknown[]) => {
    for (const value of values)
      if (value !== null && typeof value === "object" && !Array.isArray(value))
        onEvent(value as Record<string, unknown>);
  };
  /** The events in `text`, and what is left when that is not one complete event. */
  const attempt = (text: string): { events: unknown[]; rest: string | null } => {
    const whole = tryParse(text);
    if (whole.ok) return { events: [whole.value], rest: null };
    const { embedded, rest } = liftEmbedded(text, topLevelTypes);
    const remainder = tryParse(rest);
    return remainder.ok ? { events: [...embedded, remainder.value], rest: null } : { events: embedded, rest };
  };
  return (line) => {
    if (fragment) {
      const joined = attempt(fragment + line);
      fragment = "";
      if (joined.rest === null) return accept(joined.events);
      // The fragment was not the start of this line's event: it is dropped, and the line read alone.
    }
    const alone = attempt(line);
    accept(alone.events);
    if (alone.rest?.trimStart().startsWith("{") && alone.rest.length <= MAX_FRAGMENT_CHARS)
      fragment = alone.rest;
  };
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Complete top-level events found after the start of a broken line, and the line without them. */
function liftEmbedded(text: string, types: ReadonlySet<string>): { embedded: unknown[]; rest: string } {
  const embedded: unknown[] = [];
  let rest = text;
  let from = 1;
  for (;;) {
    const start = rest.indexOf('{"type":', from);
    if (start === -1) break;
    const end = balancedEnd(rest, start);
    const parsed = end === -1 ? { ok: false as const } : tryParse(rest.slice(start, end));
    if (parsed.ok && end !== -1 && types.has(String((parsed.value as { type?: unknown }).type))) {
      embedded.push(parsed.value);
      rest = rest.slice(0, start) + rest.slice(end);
      from = start;
    } else {
      from = start + 1;
    }
  }
  return { embedded, rest };
}

/** Index just past the object starting at `start`, honouring strings, or -1. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth += 1;
    else if (char === "}") {
      depth -= 1;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
