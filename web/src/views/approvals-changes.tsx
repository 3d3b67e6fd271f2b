// Everything an approval request changes, as the gateway described it (changes.ts): the headline, every item
// loudest first with the server's sentence and its details, a metadata-only notice, and the body diff.
import { When } from "../common.js";
import type { ApprovalChanges, ChangeItem, ChangeSeverity, RelationEdge } from "../types.js";
import { BodyDiffView } from "./diff.js";

const SEVERITY_RANK: Record<ChangeSeverity, number> = { danger: 0, warning: 1, change: 2, info: 3 };

/** The word read before each item, so the loudness is in the text, not only in the colour. */
const SEVERITY_LABEL: Record<ChangeSeverity, string> = {
  danger: "Deletes",
  warning: "Warning",
  change: "Change",
  info: "Note",
};

/** Items loudest first; the server already orders them, a stable sort keeps its order within a level. */
export function loudestFirst(items: ChangeItem[]): ChangeItem[] {
  return [...items].sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity]);
}

/** True when approving deletes a page, now or by an expiry it sets. */
export function deletesPage(changes: ApprovalChanges): boolean {
  return changes.items.some((item) => item.severity === "danger");
}

export function ChangesView({
  changes,
  target,
  dangerId,
}: {
  changes: ApprovalChanges;
  target: string;
  /** The danger box's id: the details heading is described by it, so focus on open reads the deletion. */
  dangerId?: string;
}) {
  const items = loudestFirst(changes.items);
  // Danger items lead in their own box; the list holds every other item.
  const danger = items.filter((item) => item.severity === "danger");
  const rest = items.filter((item) => item.severity !== "danger");
  return (
    <div className="ap-changes">
      <p className={`ap-headline${danger.length > 0 ? " ap-headline-danger" : ""}`}>{changes.headline}</p>
      {danger.length > 0 && (
        // Read first and loud: approving this deletes a page, now or when its expiry comes.
        <div id={dangerId} className="ap-danger" role="note" aria-label="Approving deletes a page">
          {danger.map((item, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: items are positional
            <p key={index}>
              <strong>{SEVERITY_LABEL.danger}:</strong> {item.text}
              {item.field === "expires_at" && item.after && (
                <>
                  {" "}
                  (<When iso={item.after} />)
                </>
              )}
            </p>
          ))}
        </div>
      )}
      {changes.metadata_only && (
        <p className="ap-metadata-only">
          <strong>Metadata only:</strong> the page body does not change
          {items.length > 0
            ? `; approving changes ${items.length === 1 ? "the item" : "the items"} below.`
            : "."}
        </p>
      )}
      {rest.length > 0 && (
        <ul className="ap-items" aria-label="What approving changes">
          {rest.map((item, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: items are positional
            <li key={index} className={`ap-item ap-sev-${item.severity}`}>
              <span className="ap-sev">{SEVERITY_LABEL[item.severity]}</span>
              <span className="ap-item-text">{item.text}</span>
              <ItemDetails item={item} />
            </li>
          ))}
        </ul>
      )}
      {changes.effect !== "feedback" && changes.body.lines.length > 0 && (
        <>
          <h3>Body{changes.metadata_only ? " (unchanged)" : ""}</h3>
          <BodyDiffView diff={changes.body} label={`Body of ${target}`} />
        </>
      )}
    </div>
  );
}

/** The structured part of an item beyond its sentence: before → after, what was added and removed. */
function ItemDetails({ item }: { item: ChangeItem }) {
  switch (item.field) {
    case "title":
      return (
        <span className="ap-before-after">
          <span className="ap-sr-only">Before: </span>
          <del>{item.before ?? "(none)"}</del> <span aria-hidden="true">→</span>
          <span className="ap-sr-only"> After: </span>
          <ins>{item.after}</ins>
        </span>
      );
    case "tags":
      return <AddedRemoved added={item.added} removed={item.removed} what="tags" />;
    case "relations":
      return (
        <AddedRemoved
          added={item.added.map(edgeText)}
          removed={item.removed.map(edgeText)}
          what="relations"
        />
      );
    case "expires_at":
      return (
        <span className="ap-before-after">
          <When iso={item.before} /> <span aria-hidden="true">→</span>
          <span className="ap-sr-only"> now: </span> <When iso={item.after} />
        </span>
      );
    case "conflict":
      return (
        <span className="muted">
          Made against version {item.base_version}; the page is now at version {item.current_version}.
        </span>
      );
    default:
      return null;
  }
}

function edgeText(edge: RelationEdge): string {
  return `${edge.type} → ${edge.target}`;
}

function AddedRemoved({ added, removed, what }: { added: string[]; removed: string[]; what: string }) {
  return (
    <span className="ap-chips">
      {added.length > 0 && (
        <span>
          <span className="ap-sr-only">{what} added: </span>
          {added.map((value) => (
            <ins key={`+${value}`} className="ap-chip ap-chip-add">
              +{value}
            </ins>
          ))}
        </span>
      )}
      {removed.length > 0 && (
        <span>
          <span className="ap-sr-only">{what} removed: </span>
          {removed.map((value) => (
            <del key={`-${value}`} className="ap-chip ap-chip-del">
              −{value}
            </del>
          ))}
        </span>
      )}
    </span>
  );
}
