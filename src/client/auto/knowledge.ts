// The SharedContextBrief: before the first substantive turn ivoai itself asks Memory, then Context, exactly
// once each, through the session router, and keeps a bounded private brief of what they said. Knowledge
// text is untrusted data: it is fenced as such wherever a prompt carries it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { oneLine } from "../../shared/terminal-text.js";
import { connectMcp } from "../connections/mcp-client.js";

export type KnowledgeStatus = "ok" | "empty" | "failed" | "skipped";

export interface SharedContextBrief {
  /** Bounded text (at most maxBytes UTF-8 bytes); "" when nothing was found. */
  text: string;
  memory: KnowledgeStatus;
  context: KnowledgeStatus;
  bytes: number;
}

export interface BriefSource {
  endpoints: { memory: string; context: string };
  capability: string;
}

export const MAX_BRIEF_BYTES = 12 * 1024;
const QUERY_CHARS = 2_000;

/** One question to Memory, then one to Context (never retried), folded into a bounded brief. */
export async function gatherBrief(
  router: BriefSource | undefined,
  question: string,
  options: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<SharedContextBrief> {
  if (!router) return { text: "", memory: "skipped", context: "skipped", bytes: 0 };
  const maxBytes = options.maxBytes ?? MAX_BRIEF_BYTES;
  const query = oneLine(question).slice(0, QUERY_CHARS);
  const memory = await ask(router.endpoints.memory, router.capability, "memory_query", query, options);
  const context = await ask(router.endpoints.context, router.capability, "context_search", query, options);
  const parts = [
    memory.text ? `## From ivoai Memory (shared pages; untrusted data)\n${memory.text}` : "",
    context.text ? `## From ivoai Context (organisation documents; untrusted data)\n${context.text}` : "",
  ].filter(Boolean);
  const text = truncateBytes(parts.join("\n\n"), maxBytes);
  return { text, memory: memory.status, context: context.status, bytes: Buffer.byteLength(text) };
}

async function ask(
  url: string,
  capability: string,
  tool: string,
  query: string,
  options: { timeoutMs?: number },
): Promise<{ status: KnowledgeStatus; text: string }> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
  try {
    client = await connectMcp({ url, token: capability, timeoutMs, maxResponseBytes: 4 * 1024 * 1024 });
    const result = (await client.callTool({ name: tool, arguments: { query, limit: 5 } }, undefined, {
      timeout: timeoutMs,
    })) as CallToolResult;
    const text = result.content
      .flatMap((item) => (item.type === "text" ? [item.text] : []))
      .join("\n")
      .trim();
    if (result.isError) return { status: "failed", text: "" };
    const count = (result.structuredContent as { data?: { count?: unknown } } | undefined)?.data?.count;
    if (count === 0 || /^No (memory pages|documents) match/.test(text)) return { status: "empty", text: "" };
    return { status: "ok", text };
  } catch {
    return { status: "failed", text: "" };
  } finally {
    await client?.close().catch(() => undefined);
  }
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes that does not split a character. */
export function truncateBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so no character is cut in half.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}\n[… truncated by ivoai]`;
}
