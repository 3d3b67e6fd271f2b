// The OpenAI chat-completions wire shapes the bridge reads and writes, as @ai-sdk/openai-compatible (inside
// OpenCode 1.18.33) sends and parses them; pure functions, no I/O.
import { z } from "zod";
import type { FrontendUsage } from "./contracts.js";

const TextPart = z.looseObject({ type: z.string(), text: z.string().optional() });
const Message = z.looseObject({
  role: z.string().max(32),
  content: z.union([z.string(), z.array(TextPart), z.null()]).optional(),
});

/** The fields of a chat-completions request the bridge acts on; everything else (tools, max_tokens…) is ignored. */
export const ChatRequest = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(Message).min(1).max(100_000),
  stream: z.boolean().optional(),
  // OpenCode's variant becomes `reasoning_effort` when the model's config maps it to `reasoningEffort`.
  reasoning_effort: z.string().max(64).nullable().optional(),
});
export type ChatRequest = z.infer<typeof ChatRequest>;

/** OpenCode's title-generation request starts its system prompt with this (seen in 1.18.33). */
const TITLE_MARKER = "You are a title generator";
const TITLE_MAX = 50;
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function messageText(message: z.infer<typeof Message>): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!content) return "";
  return content.flatMap((part) => (part.type === "text" && part.text ? [part.text] : [])).join("");
}

/** One argument of `opencode run`'s message: "…" (inner quotes escaped) or a word without spaces or quotes. */
const RUN_ARGUMENT = /"((?:\\"|[^"\\]|\\(?!"))*)"(?= |$)|[^ "]+/;

/**
 * `opencode run a "b c"` sends its arguments joined by spaces, each one holding a space wrapped in double quotes
 * (inner quotes as \"): the words as typed, when the text has exactly that shape and at least one such argument.
 * Anything else (a TUI prompt, a lone quoted word) is returned unchanged.
 */
export function asTyped(text: string): string {
  if (!text.startsWith('"') && !text.includes(' "')) return text;
  const words: string[] = [];
  let quoted = false;
  const argument = new RegExp(RUN_ARGUMENT.source, "y");
  for (let at = 0; at < text.length; ) {
    if (at > 0) {
      if (text[at] !== " ") return text;
      at += 1;
    }
    argument.lastIndex = at;
    const found = argument.exec(text);
    if (!found) return text;
    if (found[1] !== undefined) {
      const inner = found[1].replaceAll('\\"', '"');
      if (!inner.includes(" ")) return text;
      words.push(inner);
      quoted = true;
    } else words.push(found[0]);
    at += found[0].length;
  }
  // Only a prompt that is one quoted argument (`opencode run "a question"`) is unquoted: quotes around a
  // phrase inside a sentence may be what a person typed in the TUI, and their words stay as typed.
  return quoted && words.length === 1 ? (words[0] as string) : text;
}

/** The text of the last user message, or undefined when there is none. */
export function lastUserText(request: ChatRequest): string | undefined {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === "user") return messageText(message);
  }
  return undefined;
}

export function isTitleRequest(request: ChatRequest): boolean {
  return request.messages.some(
    (message) => message.role === "system" && messageText(message).trimStart().startsWith(TITLE_MARKER),
  );
}

/** A one-line title of at most 50 characters from the user's message, cut at a word when it can be. */
export function titleFrom(text: string): string {
  const line = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^["'`]+|["'`]+$/g, "")
    .trim();
  if (line.length === 0) return "New session";
  if (line.length <= TITLE_MAX) return line;
  const cut = line.slice(0, TITLE_MAX - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > TITLE_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The frontend session id from the plugin's header: up to 128 of [A-Za-z0-9_-], otherwise null. */
export function frontendSessionFrom(header: string | string[] | undefined): string | null {
  return typeof header === "string" && SESSION_ID.test(header) ? header : null;
}

export type WireErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "not_found_error"
  | "ivoai_error";

/**
 * OpenCode 1.18.33 re-sends a failed request up to 5 times when the error's text matches these (its session
 * retry policy, read from the pinned binary): a failed AUTO turn must not silently become five executor turns.
 */
const RETRY_TRIGGERS = [
  /429|500|502|503|504|524/g,
  /rate increased too quickly|rate limit|rate-limit|rate_limit|too many requests|too_many_requests/gi,
  /overloaded|unavailable|exhausted|internal error|internal_error|server error|server_error|server-error/gi,
  /provider returned error|provider_returned_error|provider-returned-error/gi,
  /terminated|fetch failed|failed to fetch|network[-_\s]error|upstream connect|connection (?:error|refused|lost)/gi,
  /socket connection was closed|socket hang up|reset before headers|getaddrinfo|enotfound|eai_again/gi,
  /econnrefused|econnreset|etimedout|timeout|timed out|time out|try your request again|retry your request/gi,
  /try again|at capacity/gi,
];

/** The message with a zero-width space inside every retry trigger: it reads the same, OpenCode won't re-send. */
export function withoutRetryTriggers(message: string): string {
  return RETRY_TRIGGERS.reduce(
    (text, pattern) => text.replace(pattern, (match) => `${match.slice(0, 1)}\u200b${match.slice(1)}`),
    message,
  );
}

/** OpenAI's error body, which @ai-sdk/openai-compatible turns into the message OpenCode shows. */
export function wireError(message: string, type: WireErrorType, code: string) {
  return { error: { message: withoutRetryTriggers(message), type, code } };
}

/** OpenAI's `usage`: prompt tokens include the cached ones, which OpenCode subtracts for its "cache read". */
export function openaiUsage(usage: FrontendUsage | undefined) {
  const input = usage?.input_tokens ?? 0;
  const output = usage?.output_tokens ?? 0;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    prompt_tokens_details: { cached_tokens: Math.min(usage?.cached_input_tokens ?? 0, input) },
  };
}

export function completion(id: string, created: number, model: string, text: string, usage?: FrontendUsage) {
  return {
    id,
    object: "chat.completion",
    created,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: openaiUsage(usage),
  };
}

/** One SSE `data:` line of a `chat.completion.chunk`; the last one carries the turn's `usage`. */
export function chunk(
  id: string,
  created: number,
  model: string,
  delta: { role?: "assistant"; content?: string },
  finish: "stop" | null,
  usage?: FrontendUsage,
): string {
  const body = {
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(finish === "stop" ? { usage: openaiUsage(usage) } : {}),
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

/**
 * An SSE error event. @ai-sdk/openai-compatible hands OpenCode 1.18.33 the event's `error` object, which it
 * shows as raw JSON unless the object's `message` is itself a JSON `{type: "error", error: {code, message}}`
 * (its parseStreamError, read from the pinned binary): then it shows that inner message as one line, and for
 * code "invalid_prompt" does not re-send the request. The words it retries on are broken as well.
 */
export function errorEvent(message: string, code: string): string {
  const shown = JSON.stringify({
    type: "error",
    error: { code: "invalid_prompt", message: withoutRetryTriggers(message) },
  });
  return `data: ${JSON.stringify({ error: { message: shown, type: "ivoai_error", code } })}\n\n`;
}

/** The one-line message an error event carries, as OpenCode shows it (for tests and logs). */
export function errorEventMessage(event: { error: { message: string } }): string {
  const inner = JSON.parse(event.error.message) as { error: { message: string } };
  return inner.error.message;
}

export const DONE = "data: [DONE]\n\n";
