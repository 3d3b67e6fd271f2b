// One error type for everything ivoai raises on purpose; the CLI maps its code to an exit status.

/** Every reason ivoai fails on purpose (the list, for code that must handle each one). */
export const IVOAI_ERROR_CODES = [
  "USAGE",
  "CONFIG_INVALID",
  "CONFIG_MISSING",
  "UNSAFE_PATH",
  "PERMISSION_DENIED",
  /** The caller is known but may not do this (e.g. approve its own request); not a file permission. */
  "FORBIDDEN",
  "NOT_FOUND",
  "CONFLICT",
  "STATE_CORRUPT",
  "LOCK_TIMEOUT",
  "LISTENER_REFUSED",
  "NETWORK",
  "NATIVE_MODULE",
  /** The database store failed (the SQLSTATE is in data.sqlstate). */
  "STORE",
  /** The database store cannot be reached (PostgreSQL down, refused, timed out). */
  "STORE_UNAVAILABLE",
  /** The database was migrated by a newer ivoai than this one. */
  "STORE_VERSION",
  /** A migration this database applied was edited since (its SHA-256 differs): the build must not start on it. */
  "STORE_MIGRATION_CHANGED",
  "INTERNAL",
] as const;

export type IvoaiErrorCode = (typeof IVOAI_ERROR_CODES)[number];

export interface IvoaiErrorOptions {
  data?: Record<string, unknown>;
  cause?: unknown;
}

/** A failure with a stable code and a message fit to show a user in one line. */
export class IvoaiError extends Error {
  override readonly name = "IvoaiError";
  readonly code: IvoaiErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: IvoaiErrorCode, message: string, options: IvoaiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }
}

export function isIvoaiError(value: unknown): value is IvoaiError {
  return value instanceof IvoaiError;
}

/** The errno code of a Node system error, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}
