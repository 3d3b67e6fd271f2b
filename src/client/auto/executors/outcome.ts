// The outcome of a turn that never reached its CLI (its private files could not be written, a bad config).
import type { TurnOutcome, TurnRequest } from "../contracts.js";
import { safeLine } from "./limits.js";

export function failedBeforeStart(request: TurnRequest, error: unknown): TurnOutcome {
  return {
    status: "failed",
    threadId: request.resumeThreadId,
    text: "",
    structured: null,
    limit: null,
    usage: null,
    exitCode: null,
    exitSignal: null,
    error: safeLine(`turn not started: ${error instanceof Error ? error.message : String(error)}`),
    durationMs: 0,
    firstEventMs: null,
  };
}
