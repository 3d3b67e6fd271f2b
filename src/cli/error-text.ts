// The CLI's one error mapping: any failure becomes a code, one sentence with the next step, and an exit status.
import { isIvoaiError } from "../shared/errors.js";
import { fetchFailureCode, networkReason } from "../shared/system-error-text.js";

/** What the CLI reports for a failure. */
export interface ErrorReport {
  /** An IvoaiErrorCode, or INTERNAL for a failure nobody anticipated. */
  code: string;
  message: string;
  /** 2 for usage errors, else 1. */
  exitCode: number;
}

export interface ErrorContext {
  /** The command administers a server tree: its files belong to the server's user. */
  server: boolean;
}

interface SystemError {
  code: string;
  syscall?: string;
  path?: string;
  dest?: string;
  address?: string;
  port?: number;
  hostname?: string;
  message: string;
}

const READS = new Set([
  "open",
  "read",
  "stat",
  "lstat",
  "access",
  "scandir",
  "opendir",
  "readlink",
  "realpath",
]);

function isSystemError(error: unknown): error is SystemError {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === "string" &&
    /^E[A-Z0-9]+$/.test((error as unknown as { code: string }).code)
  );
}

/** Maps any thrown value to the report the CLI prints. */
export function describeError(error: unknown, context: ErrorContext): ErrorReport {
  if (isIvoaiError(error)) {
    return { code: error.code, message: error.message, exitCode: error.code === "USAGE" ? 2 : 1 };
  }
  const message = isSystemError(error) ? systemErrorText(error, context) : otherErrorText(error, context);
  if (message) return { ...message, exitCode: 1 };
  const raw = error instanceof Error ? error.message : String(error);
  return { code: "INTERNAL", message: `unexpected error: ${raw.split("\n")[0] ?? ""}`, exitCode: 1 };
}

function systemErrorText(error: SystemError, context: ErrorContext): { code: string; message: string } {
  const where = error.path ?? "a file";
  const endpoint = error.address ? `${error.address}${error.port === undefined ? "" : `:${error.port}`}` : "";
  switch (error.code) {
    case "ENOENT":
      return { code: "NOT_FOUND", message: `${where} does not exist: check the path` };
    case "EACCES":
    case "EPERM": {
      if (!error.path && endpoint)
        return {
          code: "PERMISSION_DENIED",
          message: `permission denied for ${endpoint}: use a port above 1023 or grant the capability to bind it`,
        };
      const verb = READS.has(error.syscall ?? "") ? "reading" : error.syscall ? "writing" : "accessing";
      const who = context.server ? "the server's user" : "the user who owns it";
      return {
        code: "PERMISSION_DENIED",
        message: `permission denied ${verb} ${where}: run as ${who} or fix the permissions`,
      };
    }
    case "EADDRINUSE":
      return {
        code: "LISTENER_REFUSED",
        message: `${portPhrase(error)} is in use: stop the other process or change --listen`,
      };
    case "EADDRNOTAVAIL":
      return {
        code: "LISTENER_REFUSED",
        message: `${error.address ?? "the address"} is not an address of this machine: change --listen`,
      };
    case "ENOSPC":
      return {
        code: "INTERNAL",
        message: `no space left on the device holding ${where}: free some space and retry`,
      };
    case "EROFS":
      return { code: "PERMISSION_DENIED", message: `${where} is on a read-only file system` };
    case "ENOTDIR":
      return { code: "NOT_FOUND", message: `a part of ${where} is not a directory: check the path` };
    case "EISDIR":
      return { code: "CONFIG_INVALID", message: `${where} is a directory where a file was expected` };
    case "EEXIST":
      return { code: "CONFLICT", message: `${where} already exists` };
    case "EMFILE":
    case "ENFILE":
      return { code: "INTERNAL", message: "too many open files: raise the limit (ulimit -n) and retry" };
    default: {
      const reason = networkReason(error.code);
      const target = endpoint || error.hostname || "the server";
      if (reason)
        return {
          code: "NETWORK",
          message: `could not reach ${target} (${reason}): check the URL and network`,
        };
      return { code: "INTERNAL", message: `${error.message.split("\n")[0] ?? error.code}` };
    }
  }
}

function portPhrase(error: SystemError): string {
  if (error.port === undefined) return error.address ?? "the address";
  return `port ${error.port}${error.address ? ` on ${error.address}` : ""}`;
}

function otherErrorText(
  error: unknown,
  context: ErrorContext,
): { code: string; message: string } | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.message === "fetch failed") {
    const reason = networkReason(fetchFailureCode(error)) ?? "no answer";
    return { code: "NETWORK", message: `could not reach the server (${reason}): check the URL and network` };
  }
  if (/^Cannot open database because the directory does not exist/.test(error.message)) {
    return {
      code: "CONFIG_MISSING",
      message: `a database directory does not exist: ${context.server ? 'run "ivoai server init --root DIR" for this tree' : "check the path"}`,
    };
  }
  const sqlite = (error as { code?: unknown }).code;
  if (error.name === "SqliteError" && typeof sqlite === "string") {
    const who = context.server ? "the server's user" : "the user who owns it";
    if (
      sqlite.startsWith("SQLITE_CANTOPEN") ||
      sqlite.startsWith("SQLITE_READONLY") ||
      sqlite.startsWith("SQLITE_PERM")
    )
      return {
        code: "PERMISSION_DENIED",
        message: `cannot open a database (${error.message}): run as ${who} or fix the permissions`,
      };
    if (sqlite.startsWith("SQLITE_BUSY") || sqlite.startsWith("SQLITE_LOCKED"))
      return { code: "LOCK_TIMEOUT", message: "a database is busy in another process: retry in a moment" };
    if (sqlite.startsWith("SQLITE_FULL"))
      return { code: "INTERNAL", message: "the disk is full: free some space and retry" };
    if (sqlite.startsWith("SQLITE_CORRUPT") || sqlite.startsWith("SQLITE_NOTADB"))
      return {
        code: "STATE_CORRUPT",
        message: `a database file is damaged (${error.message}): restore it from a backup`,
      };
  }
  return undefined;
}
