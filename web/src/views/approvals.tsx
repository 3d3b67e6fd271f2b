// Approvals: the queue (virtualised, live while pending, filtered from the URL), one request's details at
// /console/approvals/<id>, and decisions one at a time or in bulk.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { useNavigate, useParams, useSearch } from "@tanstack/react-router";
import { useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import { query } from "../api.js";
import { formatNumber, QueryState, useTitle } from "../common.js";
import { useApi, useCan } from "../context.js";
import type { ApprovalCounts, ApprovalPage, ApprovalStatusName, ApprovalSummary } from "../types.js";
import { ApprovalDetail } from "./approval-detail.js";
import { BulkBar, type BulkOutcome, BulkResults } from "./approvals-bulk.js";
import { ApprovalList } from "./approvals-list.js";
import {
  AGE_LABEL,
  AGES,
  type AgeName,
  type ApprovalSearch,
  describeFilters,
  GATED_TOOLS,
  listQuery,
  STATUSES,
} from "./approvals-search.js";
import "./approvals.css";

const PAGE_SIZE = 200;
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
/** A typed filter is applied this long after the last keystroke. */
const TYPING_MS = 350;

export function ApprovalsView() {
  useTitle("Approvals");
  const api = useApi();
  const canDecide = useCan("approvals:decide");
  const search = useSearch({ from: "/approvals" });
  const openId = useParams({ strict: false }).id ?? null;
  const navigate = useNavigate();
  const status: ApprovalStatusName = search.status ?? "pending";
  const live = status === "pending";
  const filters = describeFilters(search);
  const hintId = useId();
  const [checked, setChecked] = useState<Map<string, ApprovalSummary>>(() => new Map());
  const [bulk, setBulk] = useState<BulkOutcome | null>(null);
  useFocusBackToList(openId);

  const setSearch = useCallback(
    (next: Partial<ApprovalSearch>) => {
      setChecked(new Map());
      void navigate({ to: ".", search: (prev: ApprovalSearch) => ({ ...prev, ...next }), replace: true });
    },
    [navigate],
  );
  const open = useCallback(
    (id: string) =>
      void navigate({ to: "/approvals/$id", params: { id }, search: (prev: ApprovalSearch) => prev }),
    [navigate],
  );

  const counts = useQuery({
    queryKey: ["approval-counts"],
    queryFn: () => api.get<ApprovalCounts>("/v1/approvals/counts"),
    refetchInterval: live ? LIVE_MS : false,
  });
  const list = useInfiniteQuery({
    queryKey: ["approvals", search],
    queryFn: ({ pageParam }) =>
      api.get<ApprovalPage>(
        `/v1/approvals${query({ ...listQuery(search, Date.now()), limit: PAGE_SIZE, cursor: pageParam })}`,
      ),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    refetchInterval: (current) => (live ? liveInterval(current.state.data?.pages.length ?? 0) : false),
  });
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.approvals) ?? [], [list.data]);
  const loadMore = useCallback(() => {
    if (!list.isFetchingNextPage) void list.fetchNextPage();
  }, [list.isFetchingNextPage, list.fetchNextPage]);
  const toggle = useCallback((row: ApprovalSummary) => {
    setChecked((current) => {
      const next = new Map(current);
      if (next.has(row.id)) next.delete(row.id);
      else next.set(row.id, row);
      return next;
    });
  }, []);

  return (
    <>
      <h1>Approvals</h1>
      <p className="muted">
        Agents' changes to shared memory wait here for a person.{" "}
        {canDecide
          ? "Open a request to approve or reject it, or check several to decide them together."
          : "Your role can read requests but not decide them."}
      </p>
      <Filters search={search} status={status} counts={counts.data} rows={rows} setSearch={setSearch} />
      {/* Counts and the refresh rate go while the server does not answer: only its error stays. */}
      {!(list.isError || counts.isError) && (
        <p className="count ap-count" aria-live="polite">
          {countLine(status, counts.data?.[status], rows.length, list.hasNextPage, filters)}
          {live ? ` · updates every ${liveInterval(list.data?.pages.length ?? 0) / 1000} s` : ""}
        </p>
      )}
      {bulk && <BulkResults outcome={bulk} onDismiss={() => setBulk(null)} />}
      <div className="approvals ap-layout-grid">
        <div className="approvals-list">
          {canDecide && live && rows.length > 0 && (
            <SelectAll rows={rows} checked={checked} setChecked={setChecked} />
          )}
          {canDecide && checked.size > 0 && (
            <BulkBar
              selected={[...checked.values()]}
              onClear={() => setChecked(new Map())}
              onDone={(outcome) => {
                setChecked(new Map());
                setBulk(outcome);
              }}
            />
          )}
          <QueryState query={list} label="approval requests">
            {() =>
              rows.length === 0 ? (
                <p className="muted">
                  No {status} requests{filters ? ` matching ${filters}` : ""}.
                </p>
              ) : (
                <ApprovalList
                  rows={rows}
                  openId={openId}
                  onOpen={open}
                  {...(canDecide && live ? { checked: new Set(checked.keys()), onToggle: toggle } : {})}
                  hasMore={list.hasNextPage}
                  loadMore={loadMore}
                  describedBy={hintId}
                />
              )
            }
          </QueryState>
          <p id={hintId} className="muted ap-hint">
            Arrow keys move, Enter opens
            {canDecide && live ? ", Space checks a request for a bulk decision" : ""}.
          </p>
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

/**
 * When the open request closes (back button, a link to the list) the focus it held would fall to the page's
 * body: it goes back to the list instead, on the request the keyboard was on.
 */
function useFocusBackToList(openId: string | null): void {
  const previous = useRef(openId);
  useEffect(() => {
    const closed = previous.current !== null && openId === null;
    previous.current = openId;
    if (closed && (document.activeElement === null || document.activeElement === document.body)) {
      document.querySelector<HTMLElement>('[role="listbox"]')?.focus();
    }
  }, [openId]);
}

/** "12 pending" or "37 pending shown matching requester “Bea” (of 450 pending)". */
function countLine(
  status: string,
  total: number | undefined,
  shown: number,
  more: boolean,
  filters: string,
): string {
  if (!filters) return total !== undefined ? `${formatNumber(total)} ${status}` : "";
  const of = total !== undefined ? ` (of ${formatNumber(total)} ${status})` : "";
  return `${formatNumber(shown)}${more ? "+" : ""} ${status} matching ${filters}${of}`;
}

function SelectAll({
  rows,
  checked,
  setChecked,
}: {
  rows: ApprovalSummary[];
  checked: Map<string, ApprovalSummary>;
  setChecked: (next: Map<string, ApprovalSummary>) => void;
}) {
  const id = useId();
  const all = rows.length > 0 && rows.every((row) => checked.has(row.id));
  return (
    <div className="ap-select-all">
      <input
        id={id}
        type="checkbox"
        checked={all}
        ref={(input) => {
          if (input) input.indeterminate = !all && checked.size > 0;
        }}
        onChange={() => setChecked(all ? new Map() : new Map(rows.map((row) => [row.id, row])))}
      />
      <label htmlFor={id}>Check all {formatNumber(rows.length)} shown</label>
    </div>
  );
}

function Filters({
  search,
  status,
  counts,
  rows,
  setSearch,
}: {
  search: ApprovalSearch;
  status: ApprovalStatusName;
  counts: ApprovalCounts | undefined;
  rows: ApprovalSummary[];
  setSearch: (next: Partial<ApprovalSearch>) => void;
}) {
  const id = useId();
  // Suggestions from what is loaded: the names people know requesters by, and the scopes in the queue.
  const requesters = useMemo(
    () => [...new Set(rows.map((row) => row.requester_name ?? row.requester))].slice(0, 50),
    [rows],
  );
  const scopes = useMemo(() => [...new Set(rows.map((row) => row.scope))].slice(0, 50), [rows]);
  return (
    <div className="toolbar ap-filters">
      <span className="ap-field">
        <label htmlFor={`${id}-status`}>Status</label>
        <select
          id={`${id}-status`}
          value={status}
          onChange={(event) => {
            const next = event.target.value as ApprovalStatusName;
            setSearch({ status: next === "pending" ? undefined : next });
          }}
        >
          {STATUSES.map((name) => (
            <option key={name} value={name}>
              {name}
              {counts ? ` (${formatNumber(counts[name])})` : ""}
            </option>
          ))}
        </select>
      </span>
      <TextFilter
        label="Search"
        value={search.q}
        onCommit={(q) => setSearch({ q })}
        placeholder="summary or path"
      />
      <TextFilter
        label="Requester"
        value={search.requester}
        onCommit={(requester) => setSearch({ requester })}
        suggestions={requesters}
      />
      <TextFilter
        label="Scope"
        value={search.scope}
        onCommit={(scope) => setSearch({ scope })}
        suggestions={scopes}
      />
      <span className="ap-field">
        <label htmlFor={`${id}-tool`}>Tool</label>
        <select
          id={`${id}-tool`}
          value={search.tool ?? ""}
          onChange={(event) => setSearch({ tool: event.target.value || undefined })}
        >
          <option value="">any</option>
          {[...new Set([...GATED_TOOLS, ...(search.tool ? [search.tool] : [])])].map((tool) => (
            <option key={tool} value={tool}>
              {tool}
            </option>
          ))}
        </select>
      </span>
      <span className="ap-field">
        <label htmlFor={`${id}-age`}>Older than</label>
        <select
          id={`${id}-age`}
          value={search.age ?? ""}
          onChange={(event) => setSearch({ age: (event.target.value || undefined) as AgeName | undefined })}
        >
          <option value="">any age</option>
          {(Object.keys(AGES) as AgeName[]).map((name) => (
            <option key={name} value={name}>
              {AGE_LABEL[name]}
            </option>
          ))}
        </select>
      </span>
    </div>
  );
}

/** A text filter applied once typing pauses (or on Enter), so each keystroke is not a request and a URL. */
function TextFilter({
  label,
  value,
  onCommit,
  placeholder,
  suggestions,
}: {
  label: string;
  value: string | undefined;
  onCommit: (value: string | undefined) => void;
  placeholder?: string;
  suggestions?: string[];
}) {
  const id = useId();
  const [draft, setDraft] = useState(value ?? "");
  const commit = useRef(onCommit);
  commit.current = onCommit;
  // The URL changed under the field (back button, a link): show what is applied.
  useEffect(() => setDraft(value ?? ""), [value]);
  useEffect(() => {
    const trimmed = draft.trim();
    if (trimmed === (value ?? "")) return;
    const timer = setTimeout(() => commit.current(trimmed || undefined), TYPING_MS);
    return () => clearTimeout(timer);
  }, [draft, value]);
  return (
    <span className="ap-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="search"
        value={draft}
        placeholder={placeholder}
        list={suggestions ? `${id}-list` : undefined}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter") onCommit(draft.trim() || undefined);
        }}
      />
      {suggestions && (
        <datalist id={`${id}-list`}>
          {suggestions.map((item) => (
            <option key={item} value={item} />
          ))}
        </datalist>
      )}
    </span>
  );
}
