// Reads a bounded JSON request body and validates it, answering 415/400 with a JSON error on bad input.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import { problem } from "./problem.js";

/** Deeper bodies are refused before parsing: later recursive steps (validation, serialisation) overflow the stack. */
export const MAX_JSON_DEPTH = 64;

export type JsonBodyResult<T> = { ok: true; value: T } | { ok: false; response: Response };

/** The global limit is enforced by the body-limit middleware before this runs; `maxBytes` narrows it per route. */
export async function readJsonBody<S extends z.ZodType>(
  c: Context,
  schema: S,
  maxBytes?: number,
): Promise<JsonBodyResult<z.infer<S>>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    return refuse(c, 415, "unsupported_media_type", "send the body as application/json");
  }
  const text = await c.req.text();
  if (maxBytes !== undefined && Buffer.byteLength(text) > maxBytes) {
    return refuse(c, 413, "payload_too_large", `this endpoint accepts at most ${maxBytes} bytes`);
  }
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    const message = `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;
    return refuse(c, 400, "invalid_json", message);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return refuse(c, 400, "invalid_json", "the request body is not valid JSON");
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  return refuse(c, 400, "invalid_request", `${where}${issue?.message ?? "invalid body"}`);
}

function refuse(
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  message: string,
): { ok: false; response: Response } {
  return { ok: false, response: problem(c, status, error, message) };
}

/** Whether `[` / `{` nesting (outside strings) goes past `max`, in one pass without recursion. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 92)
        i++; // backslash: the next character is escaped
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 91 || code === 123) {
      if (++depth > max) return true;
    } else if (code === 93 || code === 125) depth--;
  }
  return false;
}
