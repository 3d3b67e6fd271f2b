// Audit: the audit log's events with filters (kind, credential, tool, status, time range, text), newest first,
// paged back with "Older events", and the filtered events exported as JSON Lines or CSV by the server.
import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import {
  AUDIT_KINDS,
  type AuditEventPage,
  type AuditEventRow,
  type EnrolledClient,
  type WebClient,
} from "../../../src/protocol/console-api.js";
import { query } from "../api.js";
import { DataTable, QueryState, useTitle, When } from "../common.js";
import { useApi, useCan } from "../context.js";
import "./admin.css";

export const TOOL_STATUSES = ["SUCCESS", "FAILED", "PENDING_HUMAN_APPROVAL", "REJECTED"] as const;
/** Events per page (and per "Older events"). */
export const AUDIT_PAGE = 50;

/** The filters as the API takes them (empty values are left out of the query). */
export interface AuditFilters {
  kind: string;
  credential_id: string;
  tool: string;
  status: string;
  /** datetime-local text. */
  since: string;
  until: string;
  q: string;
}

const NO_FILTERS: AuditFilters = {
  kind: "",
  credential_id: "",
  tool: "",
  status: "",
  since: "",
  until: "",
  q: "",
};

/** datetime-local text ("2026-12-01T14:05") → ISO, or undefined when empty/invalid. */
function localToIso(value: string): string | undefined {
  if (value.length === 0) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** The query parameters of the filters, shared by the list and the export. */
export function filterParams(filters: AuditFilters): Record<string, string | undefined> {
  return {
    kind: filters.kind,
    credential_id: filters.credential_id.trim(),
    tool: filters.tool.trim(),
    status: filters.status,
    since: localToIso(filters.since),
    until: localToIso(filters.until),
    q: filters.q.trim(),
  };
}

/** Known credentials by id → name, for the credential filter (empty without clients:read). */
function useCredentialNames(): { id: string; name: string }[] {
  const api = useApi();
  const canRead = useCan("clients:read");
  const enrolled = useQuery({
    queryKey: ["clients"],
    queryFn: () => api.get<{ clients: EnrolledClient[] }>("/v1/admin/clients"),
    enabled: canRead,
  });
  const web = useQuery({
    queryKey: ["oauth-clients"],
    queryFn: () => api.get<{ clients: WebClient[] }>("/v1/admin/oauth-clients"),
    enabled: canRead,
  });
  return [
    ...(enrolled.data?.clients ?? []).map((client) => ({ id: client.id, name: client.name })),
    ...(web.data?.clients ?? []).map((client) => ({
      id: `oauth:${client.client_id}`,
      name: client.client_name ?? client.client_id,
    })),
  ];
}

export function AuditView() {
  useTitle("Audit");
  const api = useApi();
  const formId = useId();
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const credentials = useCredentialNames();
  const params = filterParams(filters);
  const events = useInfiniteQuery({
    queryKey: ["audit-events", params],
    initialPageParam: undefined as number | undefined,
    queryFn: ({ pageParam }) =>
      api.get<AuditEventPage>(
        `/v1/audit/events${query({ ...params, limit: AUDIT_PAGE, before: pageParam })}`,
      ),
    // A page is oldest first; the page before starts below its first id.
    getNextPageParam: (last) => (last.events.length < AUDIT_PAGE ? undefined : last.events[0]?.id),
  });
  const pages = events.data?.pages ?? [];
  const rows = pages.flatMap((page) => [...page.events].reverse());
  const names = new Map<string, string>(pages.flatMap((page) => Object.entries(page.credential_names ?? {})));
  const field = (name: keyof AuditFilters) => ({
    id: `${formId}-${name}`,
    value: draft[name],
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value }),
  });
  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters(draft);
  };
  const exportHref = (format: "jsonl" | "csv") => `/v1/audit/export${query({ ...params, format })}`;

  return (
    <>
      <h1>Audit</h1>
      <form className="audit-filters panel" aria-label="Audit filters" onSubmit={apply}>
        <div className="field">
          <label htmlFor={`${formId}-kind`}>Kind</label>
          <select {...field("kind")}>
            <option value="">Any kind</option>
            {AUDIT_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${formId}-credential_id`}>Credential</label>
          <select {...field("credential_id")}>
            <option value="">Any credential</option>
            {credentials.map((credential) => (
              <option key={credential.id} value={credential.id}>
                {credential.name} ({credential.id})
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${formId}-tool`}>Tool</label>
          <input type="text" autoComplete="off" {...field("tool")} />
        </div>
        <div className="field">
          <label htmlFor={`${formId}-status`}>Status</label>
          <select {...field("status")}>
            <option value="">Any status</option>
            {TOOL_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${formId}-since`}>From</label>
          <input type="datetime-local" {...field("since")} />
        </div>
        <div className="field">
          <label htmlFor={`${formId}-until`}>Until</label>
          <input type="datetime-local" {...field("until")} />
        </div>
        <div className="field">
          <label htmlFor={`${formId}-q`}>Text</label>
          <input type="search" autoComplete="off" {...field("q")} />
        </div>
        <div className="buttons">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            onClick={() => {
              setDraft(NO_FILTERS);
              setFilters(NO_FILTERS);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <p className="toolbar">
        <span>Export the filtered events:</span>
        <a className="button" href={exportHref("jsonl")} download>
          Export JSON Lines
        </a>
        <a className="button" href={exportHref("csv")} download>
          Export CSV
        </a>
      </p>
      <QueryState query={events} label="audit events">
        {() => (
          <>
            <DataTable
              caption={`Audit events, newest first (${rows.length} shown)`}
              columns={["Time", "Kind", "What", "Credential", "Session", "Status", "Duration", "Detail"]}
              empty="No events match these filters."
              rows={rows.map((event) => <EventRow key={event.id} event={event} names={names} />)}
            />
            {events.hasNextPage && (
              <button
                type="button"
                disabled={events.isFetchingNextPage}
                onClick={() => void events.fetchNextPage()}
              >
                {events.isFetchingNextPage ? "Loading older events…" : "Older events"}
              </button>
            )}
          </>
        )}
      </QueryState>
    </>
  );
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

function EventRow({ event, names }: { event: AuditEventRow; names: Map<string, string> }) {
  const detail = event.detail;
  const tool = text(event.tool);
  const credentialId = text(event.credential_id);
  const credential =
    (credentialId !== undefined ? (names.get(credentialId) ?? credentialId) : undefined) ?? text(event.actor);
  return (
    <tr>
      <th scope="row">
        <When iso={event.at} />
      </th>
      <td>{event.kind}</td>
      <td className="mono wrap-anywhere">
        {tool ?? text((detail as { id?: unknown } | undefined)?.id) ?? ""}
      </td>
      <td className="wrap-anywhere">{credential ?? ""}</td>
      <td className="mono wrap-anywhere">{text(event.session_id) ?? ""}</td>
      <td>{text(event.status) ?? text((detail as { outcome?: unknown } | undefined)?.outcome) ?? ""}</td>
      <td className="num">{typeof event.latency_ms === "number" ? `${event.latency_ms} ms` : ""}</td>
      <td className="mono wrap-anywhere audit-detail">
        {detail === undefined ? "" : JSON.stringify(detail)}
      </td>
    </tr>
  );
}
