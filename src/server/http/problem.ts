// The JSON error body every gateway route answers with; wire errors stay apart from IvoaiError, and one
// exhaustive map turns an IvoaiError code into its HTTP status and wire error.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { type IvoaiErrorCode, isIvoaiError } from "../../shared/errors.js";

export interface Problem {
  error: string;
  message: string;
}

export function problem(c: Context, status: ContentfulStatusCode, error: string, message: string): Response {
  return c.json<Problem>({ error, message }, status);
}

interface WireError {
  status: ContentfulStatusCode;
  error: string;
  /** A fixed message replacing the error's own, for failures whose details belong in the log only. */
  message?: string;
}

const INTERNAL: WireError = {
  status: 500,
  error: "internal_error",
  message: "the server failed to handle the request",
};

/** The status and wire error of each IvoaiError code; a new code fails to type-check until it is mapped. */
export function wireErrorFor(code: IvoaiErrorCode): WireError {
  switch (code) {
    case "USAGE":
      return { status: 400, error: "invalid_request" };
    case "FORBIDDEN":
      return { status: 403, error: "forbidden" };
    case "NOT_FOUND":
      return { status: 404, error: "not_found" };
    case "CONFLICT":
      return { status: 409, error: "conflict" };
    case "LOCK_TIMEOUT":
      return { status: 503, error: "busy", message: "the server is busy; try again shortly" };
    case "STORE_UNAVAILABLE":
      return {
        status: 503,
        error: "store_unavailable",
        message: "the server's store is unavailable; try again shortly",
      };
    case "NETWORK":
      return { status: 502, error: "upstream_failed", message: "a service the server depends on failed" };
    // Unsafe paths and file permissions are the server's own state, never the caller's fault: the details
    // (absolute paths) stay in the log.
    case "UNSAFE_PATH":
    case "PERMISSION_DENIED":
    case "CONFIG_INVALID":
    case "CONFIG_MISSING":
    case "STATE_CORRUPT":
    case "LISTENER_REFUSED":
    case "NATIVE_MODULE":
    case "STORE":
    case "STORE_VERSION":
    case "STORE_MIGRATION_CHANGED":
    case "INTERNAL":
      return INTERNAL;
    default: {
      const unmapped: never = code;
      return unmapped;
    }
  }
}

/**
 * What any wire surface (HTTP, MCP tools) may tell a caller of a failure: the caller's own errors (4xx) with
 * their message; the server's own failures a fixed text, `internal` so the surface logs the details (paths,
 * hosts, driver messages) instead of sending them.
 */
export function wireMessage(error: unknown): { message: string; internal: boolean; code: string } {
  if (!isIvoaiError(error))
    return { message: INTERNAL.message as string, internal: true, code: "UNEXPECTED" };
  const wire = wireErrorFor(error.code);
  return { message: wire.message ?? error.message, internal: wire.status >= 500, code: error.code };
}

/** What a route's failure answers: an IvoaiError by its code, anything else a generic 500. */
export function problemForError(error: unknown): { status: ContentfulStatusCode; body: Problem } {
  const wire = isIvoaiError(error) ? wireErrorFor(error.code) : INTERNAL;
  const { message } = wireMessage(error);
  // A caller's error (4xx) may name itself more precisely (`data.error`, e.g. "self_approval").
  const named = isIvoaiError(error) && wire.status < 500 ? error.data?.error : undefined;
  return { status: wire.status, body: { error: typeof named === "string" ? named : wire.error, message } };
}
