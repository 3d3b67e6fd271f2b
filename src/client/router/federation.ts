// The federated read result (ADR "federated MCP reads preserve the tool-result envelope"): a valid
// CallToolResult whose one text item is readable text naming each source, and whose structuredContent holds
// the bounded federation object, every entry with its provenance.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Source } from "./selection.js";
import type { UpstreamError } from "./upstream.js";

export interface Provenance {
  source_id: string;
  alias: string;
  purpose: string;
  redundancy_group: string | null;
}

export interface SourceOutcome {
  provenance: Provenance;
  status: "ok" | "timeout" | "error" | "malformed" | "circuit_open";
  latency_ms: number;
  error?: string;
  /** Which group member answered, when a standby stood in for its primary. */
  failed_over_from?: string[];
  result?: CallToolResult;
}

/** The list fields of ivoai tool data that are merged item by item. */
const LIST_FIELDS = ["results", "documents", "pages", "events"] as const;
const MAX_ITEMS = 200;
const MAX_TEXT = 4 * 1024 * 1024;
/** One source's text in the federated text item. */
const MAX_SOURCE_TEXT = 64 * 1024;

export function provenanceOf(source: Source): Provenance {
  return {
    source_id: source.profile.id,
    alias: source.profile.alias,
    purpose: source.profile.purpose,
    redundancy_group: source.profile.redundancy_group ?? null,
  };
}

export function failureStatus(error: unknown): SourceOutcome["status"] {
  const kind = (error as UpstreamError).kind;
  return kind === "timeout" || kind === "malformed" || kind === "circuit_open" ? kind : "error";
}

/**
 * Merges per-source outcomes deterministically: sources ordered by alias, list items interleaved by rank,
 * each item carrying `_source`; identical paths from different sources stay separate items. The model reads
 * the text item (each answering source's own text once, under its name, and a line per source that did not
 * answer); programs read `structuredContent.federation`.
 */
export function federate(tool: string, outcomes: readonly SourceOutcome[]): CallToolResult {
  const ordered = [...outcomes].sort((a, b) => a.provenance.alias.localeCompare(b.provenance.alias));
  const ok = ordered.filter(answered);
  const lists = ok.map((outcome) => {
    const data = dataOf(outcome);
    const field = LIST_FIELDS.find((name) => Array.isArray(data?.[name]));
    return { outcome, items: field ? (data?.[field] as Record<string, unknown>[]) : undefined };
  });
  const federation = {
    tool,
    partial: ok.length < ordered.length,
    sources: ordered.map(sourceStatus),
    items: interleave(
      lists.map(({ outcome, items }) =>
        (items ?? []).map((item) => ({ ...item, _source: outcome.provenance })),
      ),
    ),
    // Whole per-source data for tools without a list (status, health, one page); a list is in `items` already.
    results: lists
      .filter((entry) => entry.items === undefined)
      .map(({ outcome }) => ({ source: outcome.provenance, data: dataOf(outcome) ?? null })),
  };
  const structured =
    JSON.stringify(federation).length > MAX_TEXT
      ? { ...federation, results: [], truncated: true }
      : federation;
  return {
    content: [{ type: "text", text: federatedText(ordered) }],
    structuredContent: { federation: structured },
    ...(ok.length === 0 ? { isError: true } : {}),
  };
}

const answered = (outcome: SourceOutcome) => outcome.status === "ok" && !outcome.result?.isError;

const dataOf = (outcome: SourceOutcome) =>
  (outcome.result?.structuredContent as { data?: Record<string, unknown> } | undefined)?.data;

function sourceStatus(outcome: SourceOutcome) {
  return {
    ...outcome.provenance,
    status: outcome.status === "ok" && outcome.result?.isError ? "error" : outcome.status,
    latency_ms: outcome.latency_ms,
    ...(outcome.error ? { error: outcome.error } : {}),
    ...(outcome.failed_over_from ? { failed_over_from: outcome.failed_over_from } : {}),
  };
}

/** Items by rank across the sources' lists (each already in alias order), at most MAX_ITEMS. */
function interleave(lists: readonly Record<string, unknown>[][]): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let rank = 0; items.length < MAX_ITEMS && lists.some((list) => rank < list.length); rank++) {
    for (const list of lists)
      if (rank < list.length && items.length < MAX_ITEMS) items.push(list[rank] as Record<string, unknown>);
  }
  return items;
}

/**
 * What a model reads: each answering source's own text (at most MAX_SOURCE_TEXT characters) under a line
 * naming it, then one line per source that gave no answer, all within MAX_TEXT characters.
 */
export function federatedText(ordered: readonly SourceOutcome[]): string {
  const parts: string[] = [];
  for (const outcome of ordered) {
    const { alias, purpose } = outcome.provenance;
    const name = purpose === alias ? alias : `${alias} (${purpose})`;
    if (answered(outcome)) {
      parts.push(`## ${name}\n${clip(textOf(outcome.result), MAX_SOURCE_TEXT) || "(no text)"}`);
    } else {
      const status = sourceStatus(outcome).status;
      const why = outcome.error ?? textOf(outcome.result);
      parts.push(`## ${name}: no answer (${status}${why ? `: ${clip(why.replace(/\s+/g, " "), 300)}` : ""})`);
    }
  }
  return clip(parts.join("\n\n"), MAX_TEXT);
}

function textOf(result: CallToolResult | undefined): string {
  return (result?.content ?? [])
    .flatMap((entry) => (entry.type === "text" ? [entry.text] : []))
    .join("\n")
    .trim();
}

/** At most `max` characters, never splitting a surrogate pair, saying it was cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}\n[… cut by the ivoai router]`;
}
