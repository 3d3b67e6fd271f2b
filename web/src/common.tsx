// Small shared pieces: loading/error states for queries, readable times, scrolling tables, drafts that outlive a
// sign-out, and the theme picker.
import { type ReactNode, useCallback, useEffect, useId, useState } from "react";
import { errorMessage } from "./api.js";
import { chooseTheme, storedTheme, THEME_CHOICES, type ThemeChoice } from "./theme.js";

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
 * A wide thing (a table) that scrolls sideways inside its own box instead of widening the page. The box is a
 * named, focusable region so a keyboard user can scroll it too (axe: scrollable-region-focusable).
 */
export function TableScroll({
  label,
  labelledBy,
  children,
}: {
  /** The region's name, e.g. the table's caption text. */
  label?: string;
  /** Or the id of the element naming it (a caption). */
  labelledBy?: string;
  children: ReactNode;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable to scroll by keyboard
    <section className="table-scroll" tabIndex={0} aria-label={label} aria-labelledby={labelledBy}>
      {children}
    </section>
  );
}

/**
 * A captioned table inside a scrolling region named by its caption: column headers, the rows given, or one row
 * saying there are none. Rows start with a `<th scope="row">` naming them.
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
  const captionId = useId();
  return (
    <TableScroll labelledBy={captionId}>
      <table>
        <caption id={captionId}>{caption}</caption>
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
    </TableScroll>
  );
}

// ---- Drafts -----------------------------------------------------------------------------------------------------

/** sessionStorage key prefix of a draft: the tab keeps it through an idle sign-out and the next sign-in. */
const DRAFT_PREFIX = "ivoai-draft:";

function readDraft(key: string): string | undefined {
  try {
    return window.sessionStorage.getItem(DRAFT_PREFIX + key) ?? undefined;
  } catch {
    return undefined;
  }
}

function writeDraft(key: string, value: string): void {
  try {
    if (value === "") window.sessionStorage.removeItem(DRAFT_PREFIX + key);
    else window.sessionStorage.setItem(DRAFT_PREFIX + key, value);
  } catch {
    // Storage full or blocked: the draft lives in the field only, as before.
  }
}

/** Forgets every draft (a deliberate sign-out: the next person at this tab must not find them). */
export function clearDrafts(): void {
  try {
    const keys: string[] = [];
    for (let index = 0; index < window.sessionStorage.length; index += 1) {
      const key = window.sessionStorage.key(index);
      if (key?.startsWith(DRAFT_PREFIX)) keys.push(key);
    }
    for (const key of keys) window.sessionStorage.removeItem(key);
  } catch {
    // Nothing stored.
  }
}

/**
 * A text field's value kept in sessionStorage under `key` (e.g. `approval-reason:apr_1`), so what was typed
 * survives an idle sign-out and comes back when the field mounts again after sign-in. Returns the value, a
 * setter for onChange, and `clear` for when the text was used (sent, decided).
 */
export function useDraft(key: string, initial = ""): [string, (value: string) => void, () => void] {
  const [state, setState] = useState(() => ({ key, value: readDraft(key) ?? initial }));
  // Another key (another request opened) shows that key's draft.
  const value = state.key === key ? state.value : (readDraft(key) ?? initial);
  const set = useCallback(
    (next: string) => {
      setState({ key, value: next });
      writeDraft(key, next);
    },
    [key],
  );
  const clear = useCallback(() => set(""), [set]);
  return [value, set, clear];
}

// ---- Theme ------------------------------------------------------------------------------------------------------

const THEME_LABELS: Record<ThemeChoice, string> = { system: "System", light: "Light", dark: "Dark" };

/** System / Light / Dark, remembered for the next visit. */
export function ThemeSelect() {
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);
  const id = useId();
  return (
    <span className="theme-select">
      <label htmlFor={id}>Theme</label>
      <select
        id={id}
        value={choice}
        onChange={(event) => {
          const next = event.target.value as ThemeChoice;
          chooseTheme(next);
          setChoice(next);
        }}
      >
        {THEME_CHOICES.map((name) => (
          <option key={name} value={name}>
            {THEME_LABELS[name]}
          </option>
        ))}
      </select>
    </span>
  );
}
