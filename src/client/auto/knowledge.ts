// The SharedContextBrief: before the first substantive turn ivoai itself asks Memory, then Context, exactly
// once each, through the session router, and keeps a bounded private brief of what they said, with which
// selected sources did not answer. Knowledge text is untrusted data: it is fenced as such wherever a prompt
// carries it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ServerProfile } from "../../config/client-config.js";
import { redactText } from "../../shared/redact.js";
import { oneLine } from "../../shared/terminal-text.js";
import { connectMcp } from "../connections/mcp-client.js";
import { resolveSourceNames, type Source } from "../router/selection.js";
import type { AutoState } from "../session/auto-state.js";

/** How one question of the brief went; "partial" when some selected sources answered and some did not. */
export type KnowledgeStatus = "ok" | "empty" | "partial" | "failed" | "skipped";

/** A selected source that did not answer, with a bounded one-line reason holding no secret. */
export interface FailedSource {
  alias: string;
  reason: string;
}

export interface SharedContextBrief {
  /** Bounded text (at most maxBytes UTF-8 bytes); "" when nothing was found. */
  text: string;
  memory: KnowledgeStatus;
  context: KnowledgeStatus;
  bytes: number;
  /** Selected sources that did not answer a question of the brief, each once. */
  failed: FailedSource[];
}

export interface BriefSource {
  endpoints: { memory: string; context: string };
  capability: string;
  /** The selected sources: a failure the router's answer does not attribute to a source is theirs. */
  sources?: readonly { alias: string }[];
}

export const MAX_BRIEF_BYTES = 12 * 1024;
const QUERY_CHARS = 2_000;
const REASON_CHARS = 200;
/** The session record lists at most this many sources per field. */
const MAX_LISTED = 64;
const TRUNCATED = "\n[… truncated by ivoai]";

/** One question to Memory, then one to Context (never retried), folded into a bounded brief. */
export async function gatherBrief(
  router: BriefSource | undefined,
  question: string,
  options: { maxBytes?: number; timeoutMs?: number } = {},
): Promise<SharedContextBrief> {
  if (!router) return { text: "", memory: "skipped", context: "skipped", bytes: 0, failed: [] };
  const maxBytes = options.maxBytes ?? MAX_BRIEF_BYTES;
  const query = oneLine(question).slice(0, QUERY_CHARS);
  const memory = await ask(router, "memory", "memory_query", query, options);
  const context = await ask(router, "context", "context_search", query, options);
  const text = foldBrief(
    [
      memory.text ? `## From ivoai Memory (shared pages; untrusted data)\n${memory.text}` : "",
      context.text ? `## From ivoai Context (organisation documents; untrusted data)\n${context.text}` : "",
    ],
    maxBytes,
  );
  return {
    text,
    memory: memory.status,
    context: context.status,
    bytes: Buffer.byteLength(text),
    failed: mergeFailures([...memory.failed, ...context.failed]),
  };
}

interface Answer {
  status: KnowledgeStatus;
  text: string;
  failed: FailedSource[];
}

async function ask(
  router: BriefSource,
  endpoint: "memory" | "context",
  tool: string,
  query: string,
  options: { timeoutMs?: number },
): Promise<Answer> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
  try {
    client = await connectMcp({
      url: router.endpoints[endpoint],
      token: router.capability,
      timeoutMs,
      maxResponseBytes: 4 * 1024 * 1024,
    });
    const result = (await client.callTool({ name: tool, arguments: { query, limit: 5 } }, undefined, {
      timeout: timeoutMs,
    })) as CallToolResult;
    return readAnswer(result, tool, router.sources ?? []);
  } catch (error) {
    const reason = `${tool}: ${(error as Error).message}`;
    return { status: "failed", text: "", failed: everySource(router.sources ?? [], reason) };
  } finally {
    await client?.close().catch(() => undefined);
  }
}

/** The per-source status the router gives with a federated answer, or with one source's failure. */
interface FederationView {
  sources: { alias: string; status: string; error?: string }[];
  items?: unknown[];
}

/**
 * One answer of the router as the brief keeps it: its text when something was found, its status, and the
 * sources that did not answer. A federated answer names them; an error naming none is every source's.
 */
export function readAnswer(
  result: CallToolResult,
  tool: string,
  selected: readonly { alias: string }[],
): Answer {
  const text = result.content
    .flatMap((item) => (item.type === "text" ? [item.text] : []))
    .join("\n")
    .trim();
  const federation =
    (result.structuredContent as { federation?: FederationView } | undefined)?.federation ??
    (result._meta?.["ivoai/federation"] as FederationView | undefined);
  const failed = federation
    ? federation.sources
        .filter((source) => source.status !== "ok")
        .map((source) => failure(source.alias, `${tool}: ${sourceError(source)}`))
    : result.isError
      ? everySource(selected, `${tool}: ${text || "error"}`)
      : [];
  if (result.isError) return { status: "failed", text: "", failed };
  const count = (result.structuredContent as { data?: { count?: unknown } } | undefined)?.data?.count;
  const found = federation?.items
    ? federation.items.length > 0
    : !(count === 0 || /^No (memory pages|documents) match/.test(text));
  return { status: failed.length > 0 ? "partial" : found ? "ok" : "empty", text: found ? text : "", failed };
}

/** "timeout: did not answer within 15000 ms": the kind unless a plain error, without the alias it repeats. */
function sourceError(source: FederationView["sources"][number]): string {
  const error = (source.error ?? "no answer").replace(`${source.alias}: `, "");
  return source.status === "error" ? error : `${source.status}: ${error}`;
}

function everySource(selected: readonly { alias: string }[], reason: string): FailedSource[] {
  return selected.map((source) => failure(source.alias, reason));
}

const failure = (alias: string, reason: string): FailedSource => ({ alias, reason: sourceReason(reason) });

/** Each source once, with the first reason it failed for. */
function mergeFailures(failures: readonly FailedSource[]): FailedSource[] {
  const byAlias = new Map<string, FailedSource>();
  for (const entry of failures) if (!byAlias.has(entry.alias)) byAlias.set(entry.alias, entry);
  return [...byAlias.values()].slice(0, MAX_LISTED);
}

/** A reason fit for the record and a terminal: one line, no credentials in URLs, no secret shapes, bounded. */
export function sourceReason(text: string): string {
  const line = text
    .replace(/\s+/g, " ")
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, "$1[REDACTED]@")
    .trim();
  const safe = oneLine(redactText(line));
  return safe.length > REASON_CHARS ? `${safe.slice(0, REASON_CHARS - 1)}…` : safe;
}

/**
 * The parts joined within `maxBytes` UTF-8 bytes: when they do not fit, the longer is cut so that the
 * shorter keeps its whole text or at least half the bound (Memory never crowds Context out).
 */
export function foldBrief(parts: readonly string[], maxBytes: number): string {
  const present = parts.filter(Boolean);
  const separator = "\n\n";
  const joined = present.join(separator);
  if (Buffer.byteLength(joined) <= maxBytes || present.length < 2) return truncateBytes(joined, maxBytes);
  const room = maxBytes - Buffer.byteLength(separator);
  const [first, second] = present as [string, string];
  const half = Math.floor(room / 2);
  const firstBytes = Buffer.byteLength(first);
  const secondBytes = Buffer.byteLength(second);
  const firstRoom = secondBytes <= half ? room - secondBytes : Math.min(firstBytes, half);
  return [truncateBytes(first, firstRoom), truncateBytes(second, room - firstRoom)].join(separator);
}

/**
 * The longest prefix of `text` that, with the truncation marker, fits `maxBytes` UTF-8 bytes without
 * splitting a character; the text itself when it fits.
 */
export function truncateBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes - Buffer.byteLength(TRUNCATED));
  // Step back over continuation bytes (10xxxxxx) so no character is cut in half.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString("utf8")}${TRUNCATED}`;
}

/** The knowledge servers of a session, as its record keeps them (failures are added after the brief). */
export type SourceSelection = Omit<NonNullable<AutoState["sources"]>, "failed">;

/**
 * Which servers the session uses and why the others are left out: configured is every enabled profile,
 * excluded every profile not selected (disabled, not named by --knowledge-source, or without a credential).
 */
export function describeSelection(
  profiles: readonly ServerProfile[],
  selected: readonly Source[],
  requested: readonly string[],
): SourceSelection {
  const chosen = new Set(selected.map((source) => source.profile.id));
  const named = new Set(
    requested.length > 0
      ? resolveSourceNames(profiles, requested).flatMap((name) => name.profiles.map((profile) => profile.id))
      : profiles.map((profile) => profile.id),
  );
  const reasonFor = (profile: ServerProfile) =>
    !profile.enabled
      ? "disabled"
      : !named.has(profile.id)
        ? "not named by --knowledge-source"
        : "no stored credential; connect it again";
  return {
    configured: profiles
      .filter((profile) => profile.enabled)
      .map((profile) => profile.alias)
      .slice(0, MAX_LISTED),
    selected: selected.map((source) => source.profile.alias).slice(0, MAX_LISTED),
    excluded: profiles
      .filter((profile) => !chosen.has(profile.id))
      .map((profile) => ({ alias: profile.alias, reason: reasonFor(profile) }))
      .slice(0, MAX_LISTED),
  };
}

/** Every enabled profile left out because the knowledge could not be opened at all. */
export function unavailableSelection(profiles: readonly ServerProfile[], why: string): SourceSelection {
  return {
    configured: profiles
      .filter((profile) => profile.enabled)
      .map((profile) => profile.alias)
      .slice(0, MAX_LISTED),
    selected: [],
    excluded: profiles
      .map((profile) => ({
        alias: profile.alias,
        reason: profile.enabled ? sourceReason(`not ready: ${why}`) : "disabled",
      }))
      .slice(0, MAX_LISTED),
  };
}
