// Validates a request's query string with zod, answering 400 with a JSON error naming the first bad parameter.
import type { Context } from "hono";
import { z } from "zod";
import type { JsonBodyResult } from "./json-body.js";
import { problem } from "./problem.js";

export function parseQuery<S extends z.ZodType>(c: Context, schema: S): JsonBodyResult<z.infer<S>> {
  const parsed = schema.safeParse(c.req.query());
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    response: problem(c, 400, "invalid_request", `${issue?.path.join(".") || "query"}: ${issue?.message}`),
  };
}

/** An ISO 8601 time with a zone (the only times the API takes), as a Date. */
export const isoTimeSchema = z
  .string()
  .max(64)
  .refine((text) => /(Z|[+-]\d\d:?\d\d)$/i.test(text) && !Number.isNaN(Date.parse(text)), {
    message: "expected an ISO 8601 time with a zone, e.g. 2026-01-01T00:00:00Z",
  })
  .transform((text) => new Date(text));
