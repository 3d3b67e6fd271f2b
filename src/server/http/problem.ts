// The JSON error body every gateway route answers with; wire errors stay apart from IvoaiError.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface Problem {
  error: string;
  message: string;
}

export function problem(c: Context, status: ContentfulStatusCode, error: string, message: string): Response {
  return c.json<Problem>({ error, message }, status);
}
