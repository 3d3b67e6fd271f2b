// Structured JSON-lines logging; every line passes through redaction before it is written.
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  openSync,
  renameSync,
  writeSync,
} from "node:fs";
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

export interface RotatingFileOptions {
  /** The live log file; rotated copies are `FILE.1` (newest) … `FILE.KEEP`. */
  file: string;
  /** Rotate before a line would take the live file past this size. */
  maxBytes: number;
  /** Rotated files kept (0: the live file is truncated instead). */
  keep: number;
}

/** A log sink for `createLogger({ write })` that appends to a file and rotates it by size. */
export interface RotatingFile {
  write(line: string): void;
  close(): void;
}

/**
 * Opens (or continues) a 0600 append-only log file. Each line is one write(2) with O_APPEND, so lines are
 * never split or lost, and a rotation is a handful of rename(2)s between two lines: no copying, no compression,
 * nothing a request waits for. A write error is reported once on stderr and logging carries on.
 */
export function createRotatingFile(options: RotatingFileOptions): RotatingFile {
  const { file, maxBytes, keep } = options;
  const open = () => {
    const fd = openSync(
      file,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      0o600,
    );
    fchmodSync(fd, 0o600);
    return fd;
  };
  let fd = open();
  let size = fstatSync(fd).size;
  let failed = false;
  const rotate = () => {
    try {
      if (keep === 0) {
        ftruncateSync(fd, 0);
        return;
      }
      // Renaming the live file is safe while it is open: the descriptor follows it until reopened below.
      for (let index = keep - 1; index >= 1; index -= 1) {
        if (existsSync(`${file}.${index}`)) renameSync(`${file}.${index}`, `${file}.${index + 1}`);
      }
      renameSync(file, `${file}.1`);
    } finally {
      closeSync(fd);
      fd = open();
      size = fstatSync(fd).size;
    }
  };
  return {
    write(line) {
      const bytes = Buffer.from(line);
      try {
        if (size > 0 && size + bytes.length > maxBytes) rotate();
        writeSync(fd, bytes);
        size += bytes.length;
        failed = false;
      } catch (error) {
        if (!failed) process.stderr.write(`ivoai: cannot write the log file ${file}: ${String(error)}\n`);
        failed = true;
      }
    },
    close() {
      closeSync(fd);
    },
  };
}
