// Judgments from what agents did, as the audit log recorded it: a context_search's query is a query, and the
// documents the same credential and session opened after it (context_get_document, or reading the document's
// resource) within a short window, before searching again, are its relevant documents.
import type { AuditRecord, ToolCallEvent } from "../audit/store.js";
import type { Judgments, Qrels } from "./judgments.js";

/** How long after a search an opened document still counts as that search's (default). */
export const FEEDBACK_WINDOW_MS = 10 * 60 * 1000;

const CONTEXT_URI = "ivoai://context/";

/** The tool calls that make judgments: searches and the two ways of opening a document. */
export const FEEDBACK_TOOLS = ["context_search", "context_get_document", "resources/read"] as const;

/**
 * Judgments from successful tool calls (any order: they are taken by id). Queries are identified by the audit id
 * of their first search (`audit-<id>`); the same query text searched again adds to that query's documents.
 * Documents are named by id (`doc_…`) or as `CONNECTOR:PATH` (from a resource URI).
 */
export function feedbackJudgments(
  events: readonly AuditRecord[],
  windowMs: number = FEEDBACK_WINDOW_MS,
): Judgments {
  const calls = events
    .filter((event): event is ToolCallEvent & AuditRecord => event.kind === "tool_call")
    .filter((event) => event.status === "SUCCESS")
    .sort((a, b) => a.id - b.id);
  const lastSearch = new Map<string, { queryId: string; at: number }>();
  const idOfText = new Map<string, string>();
  const texts = new Map<string, string>();
  const qrels: Qrels = new Map();
  for (const call of calls) {
    const who = `${call.credential_id}\u0000${call.session_id ?? ""}`;
    const at = Date.parse(call.at);
    if (call.tool === "context_search") {
      const text = typeof call.detail?.query === "string" ? call.detail.query : undefined;
      if (!text) continue;
      const key = text.trim().toLowerCase();
      const queryId = idOfText.get(key) ?? `audit-${call.id}`;
      idOfText.set(key, queryId);
      if (!texts.has(queryId)) texts.set(queryId, text);
      lastSearch.set(who, { queryId, at });
      continue;
    }
    const search = lastSearch.get(who);
    const opened = openedDocument(call);
    if (!search || !opened || at - search.at > windowMs) continue;
    const judged = qrels.get(search.queryId) ?? new Map<string, number>();
    qrels.set(search.queryId, judged.set(opened, 1));
  }
  const queries = [...texts].filter(([id]) => qrels.has(id)).map(([id, text]) => ({ id, text }));
  return { queries, qrels };
}

/** The document a call opened: its id, or `CONNECTOR:PATH` from a context resource URI. */
function openedDocument(call: ToolCallEvent): string | undefined {
  if (call.tool === "context_get_document") {
    const id = call.detail?.document_id;
    return typeof id === "string" ? id : undefined;
  }
  const uri = call.tool === "resources/read" ? call.detail?.uri : undefined;
  if (typeof uri !== "string" || !uri.startsWith(CONTEXT_URI)) return undefined;
  const [source, ...segments] = uri.slice(CONTEXT_URI.length).split("/");
  if (!source || segments.length === 0) return undefined;
  try {
    return `${decodeURIComponent(source)}:${segments.map(decodeURIComponent).join("/")}`;
  } catch {
    return undefined;
  }
}
