// The federated read result (ADR "federated MCP reads preserve the tool-result envelope"): a valid
// CallToolResult with one text item holding a bounded federation object, every entry with its provenance.
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
 * each item carrying `_source`; identical paths from different sources stay separate items.
 */
export function federate(tool: string, outcomes: readonly SourceOutcome[]): CallToolResult {
  const ordered = [...outcomes].sort((a, b) => a.provenance.alias.localeCompare(b.provenance.alias));
  const ok = ordered.filter((outcome) => outcome.status === "ok" && !outcome.result?.isError);
  const partial = ok.length < ordered.length;
  const lists: Record<string, unknown>[][] = ok.map((outcome) => {
    const data =
      (outcome.result?.structuredContent as { data?: Record<string, unknown> } | undefined)?.data ?? {};
    const field = LIST_FIELDS.find((name) => Array.isArray(data[name]));
    const items = field ? (data[field] as Record<string, unknown>[]) : [];
    return items.map((item) => ({ ...item, _source: outcome.provenance }));
  });
  const items: Record<string, unknown>[] = [];
  for (let rank = 0; items.length < MAX_ITEMS && lists.some((list) => rank < list.length); rank++) {
    for (const list of lists)
      if (rank < list.length && items.length < MAX_ITEMS) items.push(list[rank] as Record<string, unknown>);
  }
  const federation = {
    tool,
    partial,
    sources: ordered.map((outcome) => ({
      ...outcome.provenance,
      status: outcome.status === "ok" && outcome.result?.isError ? "error" : outcome.status,
      latency_ms: outcome.latency_ms,
      ...(outcome.error ? { error: outcome.error } : {}),
      ...(outcome.failed_over_from ? { failed_over_from: outcome.failed_over_from } : {}),
    })),
    items,
    // Whole per-source data for tools without a list (status, health, one page).
    results: ok.map((outcome) => ({
      source: outcome.provenance,
      data: (outcome.result?.structuredContent as { data?: unknown } | undefined)?.data ?? null,
      text: outcome.result?.content
        ?.map((entry) => (entry.type === "text" ? entry.text : ""))
        .join("\n")
        .slice(0, 64 * 1024),
    })),
  };
  let text = JSON.stringify({ federation });
  if (text.length > MAX_TEXT) {
    text = JSON.stringify({ federation: { ...federation, results: [], truncated: true } }).slice(0, MAX_TEXT);
  }
  return { content: [{ type: "text", text }], ...(ok.length === 0 ? { isError: true } : {}) };
}
