// Audit events as a file an auditor opens elsewhere: JSON Lines (one event a line, as the API answers it) or CSV
// (one row an event, safe to open in a spreadsheet). Written page by page so an export never holds the log.
import type { AuditListOptions, AuditLog, AuditRecord, DecisionEvent, ToolCallEvent } from "./store.js";

export const EXPORT_FORMATS = ["jsonl", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** Events an export holds at most (the newest of those matching). */
export const MAX_EXPORT_EVENTS = 100_000;
/** Events read per page while exporting. */
const EXPORT_PAGE = 1000;

/**
 * The CSV's columns, in order: every field of a tool call (its `detail` with a decision's), the credential's name,
 * and a decision's actor. Objects are written as JSON.
 */
export const CSV_COLUMNS = [
  "id",
  "at",
  "kind",
  "tool",
  "endpoint",
  "tier",
  "credential_id",
  "credential_name",
  "session_id",
  "status",
  "guardrail_checked",
  "latency_ms",
  "tokens_consumed",
  "actor",
  "detail",
] as const;

/** Fields of an event the CSV has no column for: none (the build fails when an event gains a field). */
type Unexported = Exclude<
  keyof ToolCallEvent | keyof DecisionEvent | keyof ExportedEvent,
  (typeof CSV_COLUMNS)[number]
>;
const everyFieldExported: [Unexported] extends [never] ? true : Unexported = true;
void everyFieldExported;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break, quotes doubled. Text a spreadsheet
 * would run as a formula (starting with = + - @, or a tab or carriage return that some strip first) gets a
 * leading apostrophe, so an agent's tool name cannot become a formula on the auditor's machine.
 */
export function csvCell(value: unknown): string {
  if (value === undefined || value === null) return "";
  let text =
    typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** An event as the export writes it: its own fields, plus the credential's name when it is known. */
export type ExportedEvent = AuditRecord & { credential_name?: string };

export function csvRow(event: ExportedEvent): string {
  const fields = event as unknown as Record<string, unknown>;
  return `${CSV_COLUMNS.map((column) => csvCell(fields[column])).join(",")}\r\n`;
}

export function csvHeader(): string {
  return `${CSV_COLUMNS.join(",")}\r\n`;
}

/**
 * The events matching `filter`, newest first, as the export's text in chunks: each chunk one page of the log.
 * Paging by id (`before`) keeps each read an index range however many events the log holds.
 */
export async function* exportChunks(
  audit: AuditLog,
  filter: Omit<AuditListOptions, "limit" | "before">,
  format: ExportFormat,
  limit: number,
  name: (event: AuditRecord) => ExportedEvent,
): AsyncGenerator<string> {
  if (format === "csv") yield csvHeader();
  let before: number | undefined;
  let left = Math.min(limit, MAX_EXPORT_EVENTS);
  while (left > 0) {
    const page = await audit.list({
      ...filter,
      limit: Math.min(EXPORT_PAGE, left),
      ...(before !== undefined ? { before } : {}),
    });
    if (page.length === 0) return;
    const newestFirst = page.reverse().map(name);
    yield newestFirst
      .map((event) => (format === "csv" ? csvRow(event) : `${JSON.stringify(event)}\n`))
      .join("");
    left -= page.length;
    before = newestFirst[newestFirst.length - 1]?.id;
    if (page.length < EXPORT_PAGE) return;
  }
}
