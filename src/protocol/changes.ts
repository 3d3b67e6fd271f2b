// What an approval request changes, field by field. Computed once on the server (approvals/describe.ts) and
// rendered as it is by the HTTP API's clients — the web console and `ivoai server approvals show` — so no
// client can show less than another. Types only (the browser bundle imports them).

/** How loud an item is: `danger` for anything that deletes a page (now or by a set expiry). */
export type ChangeSeverity = "danger" | "warning" | "change" | "info";

/** One relation edge of a page: `type` → `target` page path. */
export interface RelationEdge {
  type: string;
  target: string;
}

/** Fields every item carries: what it is about, how loud, and the sentence every client shows. */
interface ItemBase {
  severity: ChangeSeverity;
  /** One line a person reads, the same in every client (no markup; agent-written text is quoted). */
  text: string;
}

export type ChangeItem = ItemBase &
  (
    | { field: "delete"; version: number; title: string; lines: number }
    | {
        field: "expires_at";
        change: "set" | "changed" | "cleared";
        before: string | null;
        after: string | null;
      }
    | { field: "create"; scope: string; path: string }
    | { field: "location"; scope: string; path: string }
    | { field: "title"; before: string | null; after: string }
    | { field: "tags"; added: string[]; removed: string[] }
    | { field: "relations"; added: RelationEdge[]; removed: RelationEdge[] }
    | { field: "body"; added: number; removed: number }
    | { field: "feedback"; kind: string; note: string | null; flags: boolean }
    | { field: "conflict"; base_version: number; current_version: number }
  );

export type ChangeField = ChangeItem["field"];

/** One line of a body diff, with its number on each side (null where the line is not on that side). */
export interface DiffLine {
  op: "=" | "-" | "+";
  old: number | null;
  new: number | null;
  text: string;
}

export interface BodyDiff {
  added: number;
  removed: number;
  /** Every line of both bodies, kept ones included, so the whole body is reachable. */
  lines: DiffLine[];
  /**
   * True when the bodies were too far apart to align line by line within the server's budget: shown as the
   * common start and end kept and the middle removed then added.
   */
  coarse: boolean;
}

export interface ApprovalChanges {
  effect: "create" | "replace" | "delete" | "feedback";
  /** What approving does, in one line ("Replaces … — metadata only: …"). */
  headline: string;
  /** True when approving changes no body text: only metadata, flags or nothing at all. */
  metadata_only: boolean;
  /** Every field the request changes, the loudest first (a deletion, an expiry, a conflict, then the rest). */
  items: ChangeItem[];
  /** The body's diff (no lines for feedback). */
  body: BodyDiff;
}
