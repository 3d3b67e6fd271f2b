// The answer when the node adapter cannot build a request at all (a missing, empty or invalid Host header, a
// malformed target): without it the adapter leaves the connection hanging with no response.
import { RequestError } from "@hono/node-server";
import type { Logger } from "../../shared/logger.js";
import type { Problem } from "./problem.js";

/** 400 for a request that cannot be parsed, a logged 500 for anything else; never a stack. */
export function requestErrorResponse(error: unknown, logger: Logger): Response {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RequestError) {
    logger.warn("malformed request refused", { error: message });
    return problemResponse(400, { error: "bad_request", message: `malformed request: ${message}` });
  }
  logger.error("request failed", { error: message });
  return problemResponse(500, {
    error: "internal_error",
    message: "the server failed to handle the request",
  });
}

function problemResponse(status: number, body: Problem): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", connection: "close" },
  });
}
