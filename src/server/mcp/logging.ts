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
  /** A level not used for this long is forgotten. */
  ttlMs?: number;
  now?: () => number;
}

/** An LRU map of callers' levels with a sliding time-to-live. */
export function createLogLevelStore(options: LogLevelStoreOptions = {}): LogLevelStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const ttlMs = options.ttlMs ?? 60 * 60 * 1000;
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { level: LoggingLevel; until: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      const at = now();
      if (entry.until <= at) return undefined;
      entries.set(key, { level: entry.level, until: at + ttlMs });
      return entry.level;
    },
    set(key, level) {
      entries.delete(key);
      entries.set(key, { level, until: now() + ttlMs });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value as string;
        entries.delete(oldest);
      }
    },
    get size() {
      return entries.size;
    },
  };
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
