// MCP logging on a stateless endpoint: a caller's logging/setLevel is remembered across requests in a bounded
// store (one server per request forgets it), and log messages travel as notifications/message on the request's
// SSE answer, before its result. Messages say what happened (refusal, size, latency, approval), never document
// text or secrets.
import type { LoggingLevel, ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** RFC 5424 severities in increasing order, as MCP names them. */
export const LOG_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** The logger name every ivoai message carries. */
export const MCP_LOGGER = "ivoai";

/** Sends one log message to the caller if its level is at least the caller's; never throws. */
export type McpLog = (level: LoggingLevel, data: Record<string, unknown>) => Promise<void>;

export interface LogLevelStore {
  get(key: string): LoggingLevel | undefined;
  set(key: string, level: LoggingLevel): void;
  readonly size: number;
}

export interface LogLevelStoreOptions {
  /** Callers remembered at most; the least recently seen is forgotten first. */
  maxEntries?: number;
  /**
   * Agent sessions remembered per credential (the part of a key before its first newline): beyond it the
   * credential's own least recently seen session is forgotten, so that one caller inventing session ids cannot
   * push every other caller's level out.
   */
  maxPerCredential?: number;
  /** A level not used for this long is forgotten. */
  ttlMs?: number;
  now?: () => number;
}

/** The store's state: entries in least recently used order (a Map iterates in insertion order). */
interface LevelState {
  entries: Map<string, { level: LoggingLevel; until: number }>;
  /** Entries per credential. */
  perCredential: Map<string, number>;
  maxEntries: number;
  maxPerCredential: number;
  ttlMs: number;
  now: () => number;
}

/** An LRU map of callers' levels with a sliding time-to-live. */
export function createLogLevelStore(options: LogLevelStoreOptions = {}): LogLevelStore {
  const state: LevelState = {
    entries: new Map(),
    perCredential: new Map(),
    maxEntries: options.maxEntries ?? 10_000,
    maxPerCredential: options.maxPerCredential ?? 100,
    ttlMs: options.ttlMs ?? 60 * 60 * 1000,
    now: options.now ?? Date.now,
  };
  return {
    get: (key) => getLevel(state, key),
    set: (key, level) => setLevel(state, key, level),
    get size() {
      return state.entries.size;
    },
  };
}

function credentialOf(key: string): string {
  const cut = key.indexOf("\n");
  return cut < 0 ? key : key.slice(0, cut);
}

function removeEntry(state: LevelState, key: string): void {
  if (!state.entries.delete(key)) return;
  const owner = credentialOf(key);
  const left = (state.perCredential.get(owner) ?? 1) - 1;
  if (left > 0) state.perCredential.set(owner, left);
  else state.perCredential.delete(owner);
}

/** The level kept for `key`, refreshed (most recently used, time-to-live restarted); undefined once expired. */
function getLevel(state: LevelState, key: string): LoggingLevel | undefined {
  const entry = state.entries.get(key);
  if (!entry) return undefined;
  const at = state.now();
  if (entry.until <= at) {
    removeEntry(state, key);
    return undefined;
  }
  // Re-inserting on use keeps the least recently used first.
  state.entries.delete(key);
  state.entries.set(key, { level: entry.level, until: at + state.ttlMs });
  return entry.level;
}

function setLevel(state: LevelState, key: string, level: LoggingLevel): void {
  const owner = credentialOf(key);
  if (state.entries.has(key)) state.entries.delete(key);
  else {
    if ((state.perCredential.get(owner) ?? 0) >= state.maxPerCredential) forgetOldestOf(state, owner);
    state.perCredential.set(owner, (state.perCredential.get(owner) ?? 0) + 1);
  }
  state.entries.set(key, { level, until: state.now() + state.ttlMs });
  while (state.entries.size > state.maxEntries)
    removeEntry(state, state.entries.keys().next().value as string);
}

/** This credential's least recently seen session (a scan, only when one credential is at its bound). */
function forgetOldestOf(state: LevelState, owner: string): void {
  for (const candidate of state.entries.keys()) {
    if (credentialOf(candidate) === owner) {
      removeEntry(state, candidate);
      return;
    }
  }
}

/** Whose level a request uses: the credential, and the agent session it names (if any). */
export function logLevelKey(credentialId: string, sessionId: string | null): string {
  return `${credentialId}\n${sessionId ?? ""}`;
}

/** A log that sends messages at `threshold` or above through `send` (the request's notification channel). */
export function createMcpLog(
  threshold: LoggingLevel,
  send: (notification: ServerNotification) => Promise<void>,
): McpLog {
  const minimum = LOG_LEVELS.indexOf(threshold);
  return async (level, data) => {
    if (LOG_LEVELS.indexOf(level) < minimum) return;
    try {
      await send({ method: "notifications/message", params: { level, logger: MCP_LOGGER, data } });
    } catch {
      // The caller went away: its log message has nobody to read it, and the call's answer is not affected.
    }
  };
}
