// Approvals: the queue (virtualised, live while pending), one request's details with its diff, and the decision.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useVirtualizer } from "@tanstack/react-virtual";
import { type KeyboardEvent, useEffect, useMemo, useRef, useState } from "react";
import { query } from "../api.js";
import { age, formatNumber, QueryState, useTitle } from "../common.js";
import { useApi, useCan } from "../context.js";
import type { ApprovalCounts, ApprovalPage, ApprovalStatusName, ApprovalSummary } from "../types.js";
import { ApprovalDetail } from "./approval-detail.js";

const STATUSES: ApprovalStatusName[] = ["pending", "applied", "rejected", "expired", "conflict"];
const PAGE_SIZE = 200;
const ROW_HEIGHT = 68;
/** Pending requests are polled: an agent's new write appears without a reload. */
const LIVE_MS = 2000;
/**
 * A refresh re-reads every page loaded so far: once someone has scrolled deep (many pages of 200), the list is
 * refreshed less often so that one open tab never costs the server dozens of requests every 2 s.
 */
const DEEP_LIVE_MS = 20_000;
const DEEP_PAGES = 3;
/** How often the pending list refreshes with this many pages loaded. */
const liveInterval = (pagesLoaded: number) => (pagesLoaded > DEEP_PAGES ? DEEP_LIVE_MS : LIVE_MS);

export function ApprovalsView() {
  useTitle("Approvals");
  const api = useApi();
  const canDecide = useCan("approvals:decide");
  const [status, setStatus] = useState<ApprovalStatusName>("pending");
  const [openId, setOpenId] = useState<string | null>(null);
  const live = status === "pending";

  const counts = useQuery({
    queryKey: ["approval-counts"],
    queryFn: () => api.get<ApprovalCounts>("/v1/approvals/counts"),
    refetchInterval: live ? LIVE_MS : false,
  });
  const list = useInfiniteQuery({
    queryKey: ["approvals", status],
    queryFn: ({ pageParam }) =>
      api.get<ApprovalPage>(`/v1/approvals${query({ status, limit: PAGE_SIZE, cursor: pageParam })}`),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: (current) => (live ? liveInterval(current.state.data?.pages.length ?? 0) : false),
  });
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.approvals) ?? [], [list.data]);
  const total = counts.data?.[status];

  return (
    <>
      <h1>Approvals</h1>
      <p className="muted">
        Agents' changes to shared memory wait here for a person.{" "}
        {canDecide
          ? "Open a request to approve or reject it."
          : "Your role can read requests but not decide them."}
      </p>
      <div className="toolbar">
        <label htmlFor="approval-status">Status</label>
        <select
          id="approval-status"
          value={status}
          onChange={(event) => {
            setStatus(event.target.value as ApprovalStatusName);
            setOpenId(null);
          }}
        >
          {STATUSES.map((name) => (
            <option key={name} value={name}>
              {name}
              {counts.data ? ` (${formatNumber(counts.data[name])})` : ""}
            </option>
          ))}
        </select>
        <p className="count" aria-live="polite">
          {total !== undefined ? `${formatNumber(total)} ${status}` : ""}
          {live ? ` · updates every ${liveInterval(list.data?.pages.length ?? 0) / 1000} s` : ""}
        </p>
      </div>
      <div className="approvals">
        <div className="approvals-list">
          <QueryState query={list} label="approval requests">
            {() =>
              rows.length === 0 ? (
                <p className="muted">No {status} requests.</p>
              ) : (
                <ApprovalList
                  rows={rows}
                  openId={openId}
                  onOpen={setOpenId}
                  hasMore={list.hasNextPage}
                  loadMore={() => {
                    if (!list.isFetchingNextPage) void list.fetchNextPage();
                  }}
                />
              )
            }
          </QueryState>
        </div>
        <div className="approvals-detail">
          {openId ? (
            <ApprovalDetail key={openId} id={openId} canDecide={canDecide} />
          ) : (
            <section aria-label="Approval details" className="panel">
              <p className="muted">Select a request to see its details.</p>
            </section>
          )}
        </div>
      </div>
    </>
  );
}

function ApprovalList({
  rows,
  openId,
  onOpen,
  hasMore,
  loadMore,
}: {
  rows: ApprovalSummary[];
  openId: string | null;
  onOpen: (id: string) => void;
  hasMore: boolean;
  loadMore: () => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState(0);
  const activeIndex = Math.min(active, rows.length - 1);
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
    setActive(next);
    virtualizer.scrollToIndex(next, { align: "auto" });
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? ROW_HEIGHT * 8) / ROW_HEIGHT));
    switch (event.key) {
      case "ArrowDown":
      case "j":
        move(activeIndex + 1);
        break;
      case "ArrowUp":
      case "k":
        move(activeIndex - 1);
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
      case " ": {
        const row = rows[activeIndex];
        if (row) onOpen(row.id);
        break;
      }
      default:
        return;
    }
    event.preventDefault();
  };
  const activeRow = rows[activeIndex];

  return (
    <div
      ref={scrollRef}
      className="listbox"
      role="listbox"
      aria-label="Approval requests"
      tabIndex={0}
      aria-activedescendant={activeRow ? optionId(activeRow.id) : undefined}
      onKeyDown={onKeyDown}
    >
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {items.map((item) => {
          const row = rows[item.index];
          if (!row) return null;
          return (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the listbox handles the keyboard (aria-activedescendant)
            <div
              key={item.key}
              id={optionId(row.id)}
              role="option"
              tabIndex={-1}
              aria-selected={row.id === openId}
              aria-setsize={rows.length}
              aria-posinset={item.index + 1}
              className={`option${item.index === activeIndex ? " active" : ""}${row.id === openId ? " open" : ""}`}
              style={{
                position: "absolute",
                top: 0,
                left: 0,
                right: 0,
                transform: `translateY(${item.start}px)`,
              }}
              onClick={() => {
                setActive(item.index);
                onOpen(row.id);
              }}
            >
              <span className="row-head">
                <span className="tool">{row.tool}</span>{" "}
                <span className="target">
                  {row.scope}:{row.path}
                </span>
              </span>
              <span className="row-summary">{row.summary}</span>
              <span className="row-meta">
                by {row.requester} · {age(row.created_at)}
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}

/** A DOM id for a request's option: ids come from the server, so only safe characters are kept. */
function optionId(id: string): string {
  return `approval-${id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}
