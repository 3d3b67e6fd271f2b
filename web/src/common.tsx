// Small shared pieces: loading/error states for queries and readable times.
import { type ReactNode, useEffect } from "react";
import { errorMessage } from "./api.js";

interface QueryLike {
  isPending: boolean;
  isError: boolean;
  error: unknown;
}

/** Renders a query's loading or error state, or its children once there is data. */
export function QueryState({
  query,
  label,
  children,
}: {
  query: QueryLike;
  label: string;
  children: () => ReactNode;
}) {
  if (query.isPending) {
    return (
      <p role="status" className="muted">
        Loading {label}…
      </p>
    );
  }
  if (query.isError) {
    return (
      <p role="alert" className="error">
        Could not load {label}: {errorMessage(query.error)}
      </p>
    );
  }
  return <>{children()}</>;
}

/** "3 min ago" style age of an ISO time, relative to now. */
export function age(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return "unknown";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** A local, readable date and time for an ISO string (the ISO text stays in a <time> element). */
export function When({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">never</span>;
  const date = new Date(iso);
  const text = Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
  return <time dateTime={iso}>{text}</time>;
}

export function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min ${Math.floor(seconds % 60)} s`;
}

export function formatNumber(value: number): string {
  return value.toLocaleString("en");
}

/** Names the browser tab after the view ("Approvals · ivoai console"). */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · ivoai console`;
  }, [title]);
}

/**
 * A captioned table inside a scrolling wrapper: column headers, the rows given, or one row saying there are none.
 * Rows start with a `<th scope="row">` naming them.
 */
export function DataTable({
  caption,
  columns,
  empty,
  rows,
}: {
  caption: ReactNode;
  columns: readonly string[];
  /** Shown in place of rows when there are none; without it an empty table has just its headers. */
  empty?: string;
  rows: readonly ReactNode[];
}) {
  return (
    <div className="table-wrap">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && empty !== undefined ? (
            <tr>
              <td colSpan={columns.length} className="muted">
                {empty}
              </td>
            </tr>
          ) : (
            rows
          )}
        </tbody>
      </table>
    </div>
  );
}
