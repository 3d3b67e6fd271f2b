// Hard limits the official CLIs report only as prose in their headless streams (usage and rate limits,
// context window, overload, lost login), classified into LimitInfo with the reset time when they say it.

import { redactText } from "../../../shared/redact.js";
import { oneLine } from "../../../shared/terminal-text.js";
import type { LimitInfo, LimitKind } from "../contracts.js";

const MAX_MESSAGE_CHARS = 300;

/** Checked in order: a 429 body naming usage_limit_reached is a usage limit, not a plain rate limit. */
const KINDS: readonly [LimitKind, RegExp][] = [
  [
    "usage_limit",
    /usage_limit_reached|usage limit|hit your (?:\w+ )?limit|insufficient_quota|quota exceeded|out of (?:credits|extra usage)/i,
  ],
  [
    "context_window",
    /context window|context_length_exceeded|context_window_exceeded|maximum context length|prompt is too long|ran out of room/i,
  ],
  ["rate_limit", /rate[_ ]limit|too many requests|\b429\b/i],
  ["overloaded", /overloaded|\b529\b|server_is_overloaded|at capacity/i],
  [
    "unauthorized",
    /\b401\b|unauthorized|not logged in|invalid api key|please run \/login|authentication_error|refresh token|token (?:has )?expired/i,
  ],
];

/** The hard limit a CLI's error text describes, or null for any other failure. */
export function classifyLimit(text: string, now: Date = new Date()): LimitInfo | null {
  const kind = KINDS.find(([, pattern]) => pattern.test(text))?.[0];
  if (!kind) return null;
  return { kind, message: safeLine(text), resetsAt: resetsAtIn(text, now) };
}

/** A CLI's words fit for a record: one line, secrets redacted, a JSON body read for its message, bounded. */
export function safeLine(text: string, max = MAX_MESSAGE_CHARS): string {
  const line = oneLine(redactText(withJsonMessages(text)))
    .replace(/\s+/g, " ")
    .trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Where a vendor's JSON error body keeps its words, most specific first. */
const MESSAGE_PATHS: readonly (readonly string[])[] = [
  ["error", "message"],
  ["message"],
  ["error", "error", "message"],
  ["error_description"],
  ["error"],
  ["detail"],
];
/** A "message" string inside JSON that is cut short or otherwise unparseable (its closing quote may be gone). */
const MESSAGE_FIELD = /"message"\s*:\s*"((?:[^"\\]|\\.){1,2000})/;
/** Bounds the JSON a line is searched for: a longer body is read only through MESSAGE_FIELD. */
const MAX_JSON_CHARS = 64 * 1024;

/**
 * The text with an embedded JSON body (`429 Too Many Requests: {"error":{…}}`) replaced by the message it
 * carries, so a bounded line says what went wrong instead of stopping mid-string. Text without JSON is unchanged.
 */
export function withJsonMessages(text: string): string {
  const start = text.indexOf("{");
  if (start === -1) return text;
  const end = text.lastIndexOf("}");
  const body =
    end > start && end - start < MAX_JSON_CHARS ? parseJson(text.slice(start, end + 1)) : undefined;
  const message = body === undefined ? fieldMessage(text.slice(start)) : messageOf(body);
  if (message === undefined) return text;
  const before = text.slice(0, start).trimEnd();
  const after = body === undefined ? "" : text.slice(end + 1).trim();
  return [before, message, after].filter((part) => part !== "").join(" ");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function messageOf(body: unknown): string | undefined {
  for (const path of MESSAGE_PATHS) {
    let value: unknown = body;
    for (const key of path)
      value = value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return undefined;
}

function fieldMessage(text: string): string | undefined {
  const match = MESSAGE_FIELD.exec(text.slice(0, MAX_JSON_CHARS));
  if (!match?.[1]) return undefined;
  const value = parseJson(`"${match[1]}"`);
  return typeof value === "string" ? value : undefined;
}

/** An epoch (seconds or milliseconds) or an ISO string as ISO, or null. */
export function isoFrom(value: unknown): string | null {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) {
    const date = new Date(value > 1e12 ? value : value * 1000);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  if (typeof value === "string" && value.trim() !== "") {
    if (/^\d+(\.\d+)?$/.test(value.trim())) return isoFrom(Number(value));
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  return null;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The reset time a limit message carries: resets_at, resets_in_seconds, "try again at DATE" or "in N s". */
function resetsAtIn(text: string, now: Date): string | null {
  const at = /"?resets_?at"?\s*[:=]\s*"?([0-9T:.+\-Z]+)"?/i.exec(text);
  if (at?.[1]) {
    const iso = isoFrom(at[1]);
    if (iso) return iso;
  }
  const inSeconds = /"?resets_in_seconds"?\s*[:=]\s*(\d+(?:\.\d+)?)/i.exec(text);
  if (inSeconds?.[1]) return new Date(now.getTime() + Number(inSeconds[1]) * 1000).toISOString();
  // Codex's own words: "… or try again at Apr 28th, 2026 10:03 PM." (the CLI's local time, which is ours).
  const when =
    /try again at ([A-Z][a-z]{2,8} \d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}:\d{2}\s*[AP]M)/i.exec(text);
  if (when) {
    const date = new Date(`${when[1]}, ${when[2]} ${when[3]}`);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
  }
  const retry = /try again in\s+(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?|m|min|minutes?|h|hours?)\b/i.exec(text);
  if (retry?.[1] && retry[2]) {
    const unit = retry[2].toLowerCase() === "ms" ? "ms" : (retry[2][0]?.toLowerCase() ?? "s");
    return new Date(now.getTime() + Number(retry[1]) * (UNIT_MS[unit] ?? 1000)).toISOString();
  }
  return null;
}
