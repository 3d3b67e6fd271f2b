// `ivoai hook claude|codex EVENT`: what the agents call at lifecycle points. It turns the agent's payload into a
// bounded observation (never the prompt or tool output itself), posts it through the session router to
// /v1/memory, and always leaves the agent on its allow / exit-0 path, whatever happens.
import { forward } from "../router/forward.js";

export const HOOK_EVENTS = ["session_start", "prompt_submitted", "tool_used", "session_end"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(value: unknown): value is HookEvent {
  return (HOOK_EVENTS as readonly unknown[]).includes(value);
}

/** Metadata only: lengths, names, kinds. */
export function summarizePayload(
  event: HookEvent,
  payload: Record<string, unknown>,
): Record<string, unknown> {
  switch (event) {
    case "session_start":
      return { source: typeof payload.source === "string" ? payload.source.slice(0, 40) : null };
    case "prompt_submitted":
      return { chars: typeof payload.prompt === "string" ? payload.prompt.length : null };
    case "tool_used":
      return { tool: typeof payload.tool_name === "string" ? payload.tool_name.slice(0, 80) : null };
    case "session_end":
      return {};
  }
}

/** Codex's notify payload (one JSON argument) as an observation. */
export function codexNotifyEvent(payload: Record<string, unknown>): {
  event: HookEvent;
  data: Record<string, unknown>;
} {
  const inputs = payload["input-messages"];
  return {
    event: "prompt_submitted",
    data: {
      turn: String(payload.type ?? "unknown").slice(0, 40),
      inputs: Array.isArray(inputs) ? inputs.length : null,
    },
  };
}

/** The router answers a hook with a status and at most a short body; anything longer is a failure. */
const MAX_ANSWER_BYTES = 16 * 1024;

/**
 * Posts one observation to the session router through `forward()` (node:http, not fetch: an agent runs this on
 * every event, and fetch's first use costs a Node 20 process about 0.1 s of CPU, undici and its WebAssembly
 * parser). No redirect is followed, the exchange has a deadline and the answer a size cap; only a 2xx is "sent".
 */
export async function sendHook(
  env: NodeJS.ProcessEnv,
  event: HookEvent,
  data: Record<string, unknown>,
  timeoutMs = 2_000,
): Promise<"sent" | "skipped" | "failed"> {
  const url = env.IVOAI_ROUTER_HOOKS_URL;
  const token = env.IVOAI_ROUTER_TOKEN;
  if (!url || !token || !env.IVOAI_SESSION_ID) return "skipped";
  const target = URL.canParse(url) ? new URL(url) : undefined;
  if (target?.protocol !== "http:" && target?.protocol !== "https:") return "failed";
  const body = JSON.stringify({
    session_id: env.IVOAI_SESSION_ID,
    project: env.IVOAI_PROJECT ?? "unknown",
    event,
    data,
  });
  try {
    const answer = await forward({
      url: target.href,
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: Buffer.from(body),
      timeoutMs,
      maxResponseBytes: MAX_ANSWER_BYTES,
    });
    return answer.status >= 200 && answer.status < 300 ? "sent" : "failed";
  } catch {
    return "failed";
  }
}
