// The approval queue as a virtualised listbox. The keyboard highlight follows a request id, not a row number,
// so it stays on the same request when new ones arrive at the top; Space checks a row for a bulk decision.
import { useVirtualizer } from "@tanstack/react-virtual";
import { type KeyboardEvent, useEffect, useMemo, useRef, useState } from "react";
import { age } from "../common.js";
import type { ApprovalSummary } from "../types.js";

const ROW_HEIGHT = 68;

export interface ApprovalListProps {
  rows: ApprovalSummary[];
  openId: string | null;
  onOpen: (id: string) => void;
  /** Ids checked for a bulk decision (absent when the role cannot decide: no checkboxes then). */
  checked?: ReadonlySet<string>;
  onToggle?: (row: ApprovalSummary) => void;
  hasMore: boolean;
  loadMore: () => void;
  describedBy?: string;
}

/** The row the keyboard is on: by id, with the last index kept for when that request leaves the list. */
function useActiveRow(rows: ApprovalSummary[]) {
  const [activeId, setActiveId] = useState<string | null>(null);
  const lastIndex = useRef(-1);
  const indexOf = useMemo(() => new Map(rows.map((row, index) => [row.id, index])), [rows]);
  let activeIndex = activeId === null ? -1 : (indexOf.get(activeId) ?? -1);
  if (activeId !== null && activeIndex === -1 && rows.length > 0) {
    // Decided or filtered away: the highlight stays where it was in the list, on the request now there.
    activeIndex = Math.min(Math.max(lastIndex.current, 0), rows.length - 1);
  }
  if (activeIndex >= 0) lastIndex.current = activeIndex;
  return { activeIndex, activeId: rows[activeIndex]?.id ?? null, setActiveId, indexOf };
}

export function ApprovalList({
  rows,
  openId,
  onOpen,
  checked,
  onToggle,
  hasMore,
  loadMore,
  describedBy,
}: ApprovalListProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const { activeIndex, activeId, setActiveId, indexOf } = useActiveRow(rows);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    getItemKey: (index) => rows[index]?.id ?? index,
  });
  const items = virtualizer.getVirtualItems();
  // The next cursor page loads when the view (or the keyboard selection) comes near the end of what is loaded.
  const reach = Math.max(items[items.length - 1]?.index ?? 0, activeIndex);

  useEffect(() => {
    if (hasMore && reach >= rows.length - 20) loadMore();
  }, [hasMore, reach, rows.length, loadMore]);

  const move = (index: number) => {
    const next = Math.max(0, Math.min(rows.length - 1, index));
    const row = rows[next];
    if (!row) return;
    setActiveId(row.id);
    virtualizer.scrollToIndex(next, { align: "auto" });
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? ROW_HEIGHT * 8) / ROW_HEIGHT));
    const row = rows[activeIndex];
    switch (event.key) {
      case "ArrowDown":
      case "j":
        move(activeIndex + 1);
        break;
      case "ArrowUp":
      case "k":
        move(activeIndex === -1 ? 0 : activeIndex - 1);
        break;
      case "Home":
        move(0);
        break;
      case "End":
        move(rows.length - 1);
        break;
      case "PageDown":
        move(activeIndex + page);
        break;
      case "PageUp":
        move(activeIndex - page);
        break;
      case "Enter":
        if (row) onOpen(row.id);
        break;
      case " ":
        if (row && onToggle) onToggle(row);
        else if (row) onOpen(row.id);
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  return (
    <div
      ref={scrollRef}
      className="listbox ap-list"
      role="listbox"
      aria-label="Approval requests"
      aria-describedby={describedBy}
      tabIndex={0}
      aria-activedescendant={activeId ? optionId(activeId) : undefined}
      onKeyDown={onKeyDown}
      onFocus={(event) => {
        // Keyboard focus lands on the open request, else the first: nothing is highlighted before that.
        if (event.target !== event.currentTarget || activeId !== null) return;
        const start = openId !== null && indexOf.has(openId) ? openId : rows[0]?.id;
        if (start) setActiveId(start);
      }}
    >
      <div className="ap-list-inner" style={{ height: virtualizer.getTotalSize() }}>
        {items.map((item) => {
          const row = rows[item.index];
          if (!row) return null;
          const isChecked = checked?.has(row.id) ?? false;
          return (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the listbox handles the keyboard (aria-activedescendant)
            <div
              key={item.key}
              id={optionId(row.id)}
              role="option"
              tabIndex={-1}
              aria-selected={row.id === openId}
              aria-checked={onToggle ? isChecked : undefined}
              aria-setsize={rows.length}
              aria-posinset={item.index + 1}
              className={`option ap-option${item.index === activeIndex ? " active" : ""}${row.id === openId ? " open" : ""}${onToggle ? " ap-checkable" : ""}`}
              style={{ transform: `translateY(${item.start}px)` }}
              onClick={() => {
                setActiveId(row.id);
                onOpen(row.id);
              }}
            >
              {onToggle && (
                <span
                  className={`ap-check${isChecked ? " ap-checked" : ""}`}
                  aria-hidden="true"
                  title="Check for a bulk decision"
                  onClick={(event) => {
                    event.stopPropagation();
                    setActiveId(row.id);
                    onToggle(row);
                  }}
                />
              )}
              <span className="ap-row-body">
                <span className="row-head">
                  <span className="tool">{row.tool}</span>{" "}
                  <span className="target">
                    {row.scope}:{row.path}
                  </span>
                </span>
                <span className="row-summary">{row.summary}</span>
                <span className="row-meta">
                  by {row.requester_name ?? row.requester} · {age(row.created_at)}
                  {row.requester_name ? <span className="ap-id"> · {row.requester}</span> : null}
                  {row.status !== "pending" ? ` · ${row.status}` : ""}
                </span>
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}

/** A DOM id for a request's option: ids come from the server, so only safe characters are kept. */
export function optionId(id: string): string {
  return `approval-${id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
