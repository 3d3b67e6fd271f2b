// What every HTTP surface (the /v1 API, the console API, OAuth) answers when a route throws, in whatever body
// shape the surface speaks: one policy (`wireMessage`), so an internal failure never leaks its details anywhere.
import type { Context, ErrorHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Logger } from "../../shared/logger.js";
import type { GatewayEnv } from "./env.js";
import { problemForError, wireMessage } from "./problem.js";

export interface WireFailure {
  status: ContentfulStatusCode;
  /** The wire error name (`not_found`, `internal_error`, …). */
  error: string;
  /** The caller's own error's message, or the generic text naming the request id. */
  message: string;
  /** The server's own failure: its details belong in the log. */
  internal: boolean;
  /** The IvoaiError code, or UNEXPECTED. */
  code: string;
}

/** The wire answer of a thrown error: the caller's own errors with their message, anything else generic. */
export function wireFailure(error: unknown, requestId: string | undefined): WireFailure {
  const { status, body } = problemForError(error);
  const { internal, code } = wireMessage(error);
  // The request id lets an operator find the logged details from what a caller reports.
  const message = internal && requestId ? `${body.message} (request ${requestId})` : body.message;
  return { status, error: body.error, message, internal, code };
}

/**
 * A Hono error handler answering through `render` (the surface's own body shape); internal failures are logged
 * with their code, message and request id (never a stack).
 */
export function wireErrorHandler(
  logger: Logger,
  render: (c: Context<GatewayEnv>, failure: WireFailure) => Response,
): ErrorHandler<GatewayEnv> {
  return (error, c) => {
    const failure = wireFailure(error, c.get("requestId"));
    if (failure.internal) {
      logger.error("request failed", {
        request_id: c.get("requestId"),
        error_code: failure.code,
        error: error.message,
      });
    }
    return render(c, failure);
  };
}

/** The JSON problem body (`error`, `message`) of the gateway's own routes. */
export function renderProblem(c: Context<GatewayEnv>, failure: WireFailure): Response {
  return c.json({ error: failure.error, message: failure.message }, failure.status);
}
