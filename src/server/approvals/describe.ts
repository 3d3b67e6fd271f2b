// What an approval request changes, field by field, in the one description every client renders (HTTP API,
// `ivoai server approvals show`, the web console). Worked out from the stored request and the page version it
// was made against, so requests filed before descriptions existed are described alike.
import type { ApprovalRecord } from "../../protocol/approvals.js";
import type { ApprovalChanges, ChangeItem, ChangeSeverity, RelationEdge } from "../../protocol/changes.js";
import { terminalJson } from "../../shared/terminal-text.js";
import { diffLines } from "../memory/diff.js";
import { type PageFields, type PageInput, pageFields } from "../memory/page-write.js";
import type { PageVersionContent } from "../memory/store.js";

export interface DescribeInput {
  approval: ApprovalRecord;
  /** The page version the request was made against; null when the page did not exist (base_version 0). */
  base: PageVersionContent | null;
  /** The page's version now (0: no page), to warn that approving would conflict. */
  currentVersion: number;
  now: Date;
}

/** How a headline names a changed field. */
const FIELD_NAMES: Partial<Record<ChangeItem["field"], string>> = { expires_at: "expiry" };

const LOUDNESS: Record<ChangeSeverity, number> = { danger: 0, warning: 1, change: 2, info: 3 };
/** Values an item's sentence names before it says "and N more" (the structured fields list them all). */
const NAMED_VALUES = 10;

export function describeChanges(input: DescribeInput): ApprovalChanges {
  const { approval, base } = input;
  const place = `${approval.scope}:${approval.path}`;
  const items: ChangeItem[] = [];
  const conflict = conflictItem(input);
  if (conflict) items.push(conflict);
  let effect: ApprovalChanges["effect"];
  let headline: string;
  // Feedback changes no text: its diff has no lines.
  let body = diffLines("", "");
  if (approval.action === "delete_page") {
    effect = "delete";
    body = diffLines(base?.body ?? "", "");
    headline = `Deletes ${place}${base ? ` (version ${base.version})` : ""}`;
    items.push({
      field: "delete",
      severity: "danger",
      version: base?.version ?? approval.base_version,
      title: base?.title ?? "",
      lines: body.removed,
      text:
        `Deletes the page ${place} (version ${base?.version ?? approval.base_version}` +
        `${base ? `, ${quote(base.title)}, ${count(body.removed, "line")}` : ""}); earlier versions are kept.`,
    });
  } else if (approval.action === "feedback") {
    effect = "feedback";
    const kind = String(approval.payload.kind ?? "");
    headline = `Marks ${place} as ${kind}`;
    items.push(locationItem(approval, base), feedbackItem(kind, approval.payload.note));
  } else {
    const after = pageFields(approval.payload as unknown as PageInput);
    body = diffLines(base?.body ?? "", after.body);
    effect = base ? "replace" : "create";
    items.push(...writeItems(approval, base, after, body, input.now));
    headline = base
      ? `Replaces ${place} (version ${base.version})`
      : `Creates ${place} titled ${quote(after.title)}`;
  }
  const metadataOnly = effect === "feedback" || (effect === "replace" && body.added + body.removed === 0);
  if (effect === "replace" && metadataOnly) {
    const changed = items.filter((item) => !["location", "body", "conflict"].includes(item.field));
    headline += changed.length
      ? ` — metadata only: ${changed.map((item) => FIELD_NAMES[item.field] ?? item.field).join(", ")} (the body is unchanged)`
      : " — nothing changes (the same body and metadata)";
  } else if (effect === "replace" || effect === "create") {
    headline += ` — body ${effect === "create" ? count(body.added, "line") : `+${body.added} −${body.removed} lines`}`;
  }
  const deletion = items.find((item) => item.field === "expires_at" && item.after !== null);
  if (deletion?.field === "expires_at" && deletion.after)
    headline += `. This page will be deleted on ${when(deletion.after, input.now)}`;
  items.sort((a, b) => LOUDNESS[a.severity] - LOUDNESS[b.severity]);
  return { effect, headline: `${headline}.`, metadata_only: metadataOnly, items, body };
}

function writeItems(
  approval: ApprovalRecord,
  base: PageVersionContent | null,
  after: PageFields,
  body: ReturnType<typeof diffLines>,
  now: Date,
): ChangeItem[] {
  const items: ChangeItem[] = [];
  const expiry = expiryItem(base?.expires_at ?? null, after.expires_at, now);
  if (expiry) items.push(expiry);
  if (!base) {
    items.push({
      field: "create",
      severity: "change",
      scope: after.scope,
      path: after.path,
      text: `Creates a new page at ${after.scope}:${after.path}.`,
    });
  } else items.push(locationItem(approval, base));
  if (base?.title !== after.title)
    items.push({
      field: "title",
      severity: "change",
      before: base?.title ?? null,
      after: after.title,
      text: base
        ? `Changes the title from ${quote(base.title)} to ${quote(after.title)}.`
        : `Title ${quote(after.title)}.`,
    });
  const tags = added(base?.tags ?? [], after.tags, (tag) => tag);
  if (tags.added.length || tags.removed.length)
    items.push({
      field: "tags",
      severity: "change",
      ...tags,
      text: sentence([
        ["Adds tags", tags.added.map(quote)],
        ["removes tags", tags.removed.map(quote)],
      ]),
    });
  const relations = added(edgesOf(base?.relations ?? {}), edgesOf(after.relations), edgeKey);
  if (relations.added.length || relations.removed.length)
    items.push({
      field: "relations",
      severity: "change",
      ...relations,
      text: sentence([
        ["Adds relations", relations.added.map(edgeText)],
        ["removes relations", relations.removed.map(edgeText)],
      ]),
    });
  items.push({
    field: "body",
    severity: body.added + body.removed === 0 ? "info" : "change",
    added: body.added,
    removed: body.removed,
    text: !base
      ? `Body of ${count(body.added, "line")}.`
      : body.added + body.removed === 0
        ? "The body is unchanged."
        : `Body: ${count(body.added, "line")} added, ${count(body.removed, "line")} removed.`,
  });
  return items;
}

function expiryItem(before: string | null, after: string | null, now: Date): ChangeItem | undefined {
  if (before === after) return undefined;
  if (after === null)
    return {
      field: "expires_at",
      change: "cleared",
      before,
      after,
      severity: "change",
      text: `Clears the expiry (was ${when(before as string, now)}): the page is no longer deleted automatically.`,
    };
  return {
    field: "expires_at",
    change: before === null ? "set" : "changed",
    before,
    after,
    severity: "danger",
    text:
      before === null
        ? `Sets an expiry: this page will be deleted on ${when(after, now)}.`
        : `Moves the expiry from ${when(before, now)}: this page will be deleted on ${when(after, now)}.`,
  };
}

function locationItem(approval: ApprovalRecord, base: PageVersionContent | null): ChangeItem {
  return {
    field: "location",
    severity: "info",
    scope: approval.scope,
    path: approval.path,
    text: `Page ${approval.scope}:${approval.path}${base ? ` (version ${base.version}, ${quote(base.title)})` : ""}.`,
  };
}

const FEEDBACK_EFFECT: Record<string, { severity: ChangeSeverity; flags: boolean; effect: string }> = {
  helpful: { severity: "change", flags: false, effect: "it ranks higher" },
  not_helpful: { severity: "change", flags: false, effect: "it ranks lower" },
  stale: { severity: "warning", flags: true, effect: "it is flagged as stale and ranks lower" },
  wrong: { severity: "warning", flags: true, effect: "it is flagged as wrong and ranks lower" },
};

function feedbackItem(kind: string, note: unknown): ChangeItem {
  const known = FEEDBACK_EFFECT[kind] ?? { severity: "change", flags: false, effect: "its counts change" };
  const noteText = typeof note === "string" && note !== "" ? note : null;
  return {
    field: "feedback",
    severity: known.severity,
    kind,
    note: noteText,
    flags: known.flags,
    text: `Marks the page as ${kind}: ${known.effect}.${noteText ? ` Note: ${quote(noteText)}.` : ""}`,
  };
}

/** Approving a pending request whose page moved on fails; the approver is told before, not after. */
function conflictItem({ approval, currentVersion }: DescribeInput): ChangeItem | undefined {
  if (approval.status !== "pending") return undefined;
  if (approval.action === "feedback" && currentVersion > 0) {
    // Feedback lands on the page as it is now; below the request's version it was deleted and written again.
    if (currentVersion >= approval.base_version) return undefined;
    return {
      field: "conflict",
      severity: "warning",
      base_version: approval.base_version,
      current_version: currentVersion,
      text:
        `The page was deleted and written again since the request (version ${approval.base_version} → ` +
        `${currentVersion}): the feedback would go to the new page.`,
    };
  }
  if (approval.action !== "feedback" && currentVersion === approval.base_version) return undefined;
  return {
    field: "conflict",
    severity: "warning",
    base_version: approval.base_version,
    current_version: currentVersion,
    text:
      currentVersion === 0
        ? "The page no longer exists: approving will fail with a conflict."
        : `The page changed since the request (version ${approval.base_version} → ${currentVersion}): approving will fail with a conflict.`,
  };
}

function edgesOf(relations: Record<string, readonly string[]>): RelationEdge[] {
  return Object.entries(relations).flatMap(([type, targets]) => targets.map((target) => ({ type, target })));
}

const edgeKey = (edge: RelationEdge) => `${edge.type}\u0000${edge.target}`;
const edgeText = (edge: RelationEdge) => `${edge.type} → ${quote(edge.target)}`;

function added<T>(before: readonly T[], after: readonly T[], key: (value: T) => string) {
  const had = new Set(before.map(key));
  const has = new Set(after.map(key));
  return {
    added: after.filter((value) => !had.has(key(value))),
    removed: before.filter((value) => !has.has(key(value))),
  };
}

/** "Adds tags "a", "b"; removes tags "c"." — empty parts left out, long lists cut with "and N more". */
function sentence(parts: [string, string[]][]): string {
  const text = parts
    .filter(([, values]) => values.length > 0)
    .map(([verb, values]) => {
      const named = values.slice(0, NAMED_VALUES).join(", ");
      return `${verb} ${named}${values.length > NAMED_VALUES ? ` and ${values.length - NAMED_VALUES} more` : ""}`;
    })
    .join("; ");
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

/**
 * Agent-written text as a JSON string: quoted, one line, with control characters, bidi overrides and the
 * invisible direction marks escaped, so no client can show a sentence reordered by the agent.
 */
function quote(text: string): string {
  return terminalJson(JSON.stringify(text)).replace(
    /[\u061c\u200e\u200f]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** "2026-12-03 14:02 UTC (in 2 minutes)": the date a person reads, and how far it is from now. */
export function when(iso: string, now: Date): string {
  const at = new Date(iso);
  const date = `${at.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  const ms = at.getTime() - now.getTime();
  if (ms <= 0) return `${date} (already past: at the next expiry sweep)`;
  const units: [number, string][] = [
    [86_400_000, "day"],
    [3_600_000, "hour"],
    [60_000, "minute"],
  ];
  const [size, unit] = units.find(([size]) => ms >= size) ?? [1000, "second"];
  return `${date} (in ${count(Math.round(ms / size), unit)})`;
}
