// Structured JSON-lines logging; every line passes through redaction before it is written.
import { redactText, redactValue } from "./redact.js";
import { terminalJson } from "./terminal-text.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface LoggerOptions {
  /** Where lines go (default: process.stderr). */
  write?: (line: string) => void;
  level?: LogLevel;
  now?: () => Date;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const min = ORDER[options.level ?? "info"];
  const now = options.now ?? (() => new Date());
  const log = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[level] < min) return;
    const record = {
      ts: now().toISOString(),
      level,
      msg,
      ...(fields ? (redactValue(fields) as object) : {}),
    };
    // Redact the serialised line too: a secret may hide inside a key or a nested string. Logs are read in
    // terminals: C1 controls and bidi overrides, which JSON leaves raw, are written as \uXXXX escapes.
    write(`${terminalJson(redactText(JSON.stringify(record)))}\n`);
  };
  return {
    debug: (msg, fields) => log("debug", msg, fields),
    info: (msg, fields) => log("info", msg, fields),
    warn: (msg, fields) => log("warn", msg, fields),
    error: (msg, fields) => log("error", msg, fields),
  };
}

/** A logger that drops everything, for code paths that must stay quiet. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
