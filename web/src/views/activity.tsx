// Activity: tool calls over time from the audit log (chart + table), breakdowns, and a session's timeline.
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { query } from "../api.js";
import { DataTable, formatNumber, QueryState, useTitle, When } from "../common.js";
import { useApi } from "../context.js";
import type { Activity, ActivityBucket, ActivityFigures, SessionTimeline } from "../types.js";
import "./admin.css";
import { CallsChart, LatencyChart } from "./charts.js";

const WINDOWS = {
  hour: { label: "Last hour", ms: 3_600_000, bucket: "minute" },
  day: { label: "Last 24 hours", ms: 86_400_000, bucket: "hour" },
  week: { label: "Last 7 days", ms: 7 * 86_400_000, bucket: "day" },
} as const satisfies Record<string, { label: string; ms: number; bucket: ActivityBucket }>;
type WindowName = keyof typeof WINDOWS;

export function totalsText(totals: ActivityFigures): string {
  return `${formatNumber(totals.calls)} calls, ${formatNumber(totals.errors)} errors, p50 ${totals.p50_ms} ms, p95 ${totals.p95_ms} ms, ${formatNumber(totals.tokens)} tokens`;
}

export function ActivityView() {
  useTitle("Activity");
  const api = useApi();
  const [windowName, setWindowName] = useState<WindowName>("day");
  const [showTable, setShowTable] = useState(false);
  const [sessionId, setSessionId] = useState<string | null>(null);
  const activity = useQuery({
    queryKey: ["activity", windowName],
    queryFn: () => {
      const spec = WINDOWS[windowName];
      const until = new Date();
      const since = new Date(until.getTime() - spec.ms);
      return api.get<Activity>(
        `/v1/audit/activity${query({ since: since.toISOString(), until: until.toISOString(), bucket: spec.bucket })}`,
      );
    },
    refetchInterval: 15_000,
  });
  return (
    <>
      <h1>Activity</h1>
      <div className="toolbar">
        <label htmlFor="activity-window">Window</label>
        <select
          id="activity-window"
          value={windowName}
          onChange={(event) => setWindowName(event.target.value as WindowName)}
        >
          {Object.entries(WINDOWS).map(([name, spec]) => (
            <option key={name} value={name}>
              {spec.label}
            </option>
          ))}
        </select>
        <button type="button" aria-pressed={showTable} onClick={() => setShowTable(!showTable)}>
          Show table
        </button>
      </div>
      <QueryState query={activity} label="activity">
        {() => {
          const data = activity.data as Activity;
          return (
            <>
              <section className="panel" aria-labelledby="act-totals">
                <h2 id="act-totals">Totals</h2>
                <dl className="totals">
                  <div>
                    <dt>Calls</dt>
                    <dd>{formatNumber(data.totals.calls)}</dd>
                  </div>
                  <div>
                    <dt>Errors</dt>
                    <dd>{formatNumber(data.totals.errors)}</dd>
                  </div>
                  <div>
                    <dt>Latency p50</dt>
                    <dd>{data.totals.p50_ms} ms</dd>
                  </div>
                  <div>
                    <dt>Latency p95</dt>
                    <dd>{data.totals.p95_ms} ms</dd>
                  </div>
                  <div>
                    <dt>Tokens</dt>
                    <dd>{formatNumber(data.totals.tokens)}</dd>
                  </div>
                </dl>
              </section>
              <CallsChart series={data.series} bucket={data.bucket} summary={totalsText(data.totals)} />
              <LatencyChart series={data.series} bucket={data.bucket} />
              {showTable && <SeriesTable data={data} />}
              <Breakdown caption="By tool" keyLabel="Tool" rows={data.by_tool} />
              <Breakdown caption="By credential" keyLabel="Credential" rows={data.by_credential} />
              <Breakdown
                caption="By session"
                keyLabel="Session"
                rows={data.by_session}
                onOpen={(key) => setSessionId(key)}
              />
            </>
          );
        }}
      </QueryState>
      {sessionId && <Timeline sessionId={sessionId} onClose={() => setSessionId(null)} />}
    </>
  );
}

const FIGURE_COLUMNS = ["Calls", "Errors", "p50 (ms)", "p95 (ms)", "Tokens"];

/** The five figure cells of a row: calls, errors, p50, p95, tokens. */
function FigureCells({ row }: { row: ActivityFigures }) {
  return (
    <>
      <td>{formatNumber(row.calls)}</td>
      <td>{formatNumber(row.errors)}</td>
      <td>{row.p50_ms}</td>
      <td>{row.p95_ms}</td>
      <td>{formatNumber(row.tokens)}</td>
    </>
  );
}

function SeriesTable({ data }: { data: Activity }) {
  return (
    <DataTable
      caption={`Tool calls per ${data.bucket}`}
      columns={["Start", ...FIGURE_COLUMNS]}
      rows={data.series.map((row) => (
        <tr key={row.start}>
          <th scope="row">
            <When iso={row.start} />
          </th>
          <FigureCells row={row} />
        </tr>
      ))}
    />
  );
}

function Breakdown({
  caption,
  keyLabel,
  rows,
  onOpen,
}: {
  caption: string;
  keyLabel: string;
  rows: (ActivityFigures & { key: string; name?: string })[];
  onOpen?: (key: string) => void;
}) {
  return (
    <DataTable
      caption={caption}
      columns={[keyLabel, ...FIGURE_COLUMNS]}
      empty="No calls in this window."
      rows={rows.map((row) => (
        <tr key={row.key}>
          <th scope="row" className="mono">
            {onOpen ? (
              <button type="button" className="link" onClick={() => onOpen(row.key)}>
                {row.key}
              </button>
            ) : row.name ? (
              <span title={row.key}>{row.name}</span>
            ) : (
              row.key
            )}
          </th>
          <FigureCells row={row} />
        </tr>
      ))}
    />
  );
}

/** datetime-local text ("2026-12-01T14:05") → ISO, or undefined when empty/invalid. */
function localToIso(value: string): string | undefined {
  if (value.length === 0) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function Timeline({ sessionId, onClose }: { sessionId: string; onClose: () => void }) {
  const api = useApi();
  const asOfId = useId();
  const [asOf, setAsOf] = useState("");
  const asOfIso = localToIso(asOf);
  const timeline = useQuery({
    queryKey: ["timeline", sessionId, asOfIso ?? "now"],
    queryFn: () =>
      api.get<SessionTimeline>(
        `/v1/audit/timeline${query({ session_id: sessionId, as_of: asOfIso, limit: TIMELINE_LIMIT })}`,
      ),
  });
  return (
    <section className="panel" aria-labelledby={`${asOfId}-h`}>
      <h2 id={`${asOfId}-h`}>
        Session timeline: <span className="mono">{sessionId}</span>
      </h2>
      <div className="toolbar">
        <label htmlFor={asOfId}>As of</label>
        <input
          id={asOfId}
          type="datetime-local"
          value={asOf}
          onChange={(event) => setAsOf(event.target.value)}
        />
        <button type="button" onClick={onClose}>
          Close timeline
        </button>
      </div>
      <QueryState query={timeline} label="the session timeline">
        {() => {
          const data = timeline.data as SessionTimeline;
          if (data.events.length === 0) return <p className="muted">No events recorded for this session.</p>;
          return (
            <>
              {data.events.length >= TIMELINE_LIMIT && (
                <p className="muted">
                  The latest {TIMELINE_LIMIT} events; pick an earlier “As of” for older ones.
                </p>
              )}
              <ol className="timeline">
                {data.events.map((event) =>
                  event.source === "tool_call" ? (
                    <li key={event.id} className={`tool-call${event.status === "SUCCESS" ? "" : " failed"}`}>
                      <p>
                        <strong>Tool call</strong> <span className="mono wrap-anywhere">{event.tool}</span> ·{" "}
                        {event.status} · {event.latency_ms} ms · <When iso={event.recorded_at} />
                        <Recorder event={event} verb="by" />
                      </p>
                    </li>
                  ) : (
                    <li key={event.id}>
                      <p>
                        <strong>{event.kind}</strong> <span className="mono">{event.project}</span> ·{" "}
                        <When iso={event.recorded_at} />
                        <Recorder event={event} verb="by" />
                        {event.valid_from || event.valid_to ? (
                          <>
                            {" "}
                            · valid {event.valid_from ?? "…"} to {event.valid_to ?? "…"}
                          </>
                        ) : null}
                      </p>
                      {event.data_withheld ? (
                        <p className="muted">
                          Content withheld: only the credential that recorded it can read it.
                        </p>
                      ) : (
                        <pre className="event-data">{JSON.stringify(event.data, null, 2)}</pre>
                      )}
                    </li>
                  ),
                )}
              </ol>
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** " · by <name>" for the credential behind a timeline event (its id when the name is unknown). */
function Recorder({ event, verb }: { event: SessionTimeline["events"][number]; verb: string }) {
  if (!event.credential_id) return null;
  return (
    <>
      {" "}
      · {verb}{" "}
      {event.credential_name ? (
        <span title={event.credential_id}>{event.credential_name}</span>
      ) : (
        <span className="mono">{event.credential_id}</span>
      )}
    </>
  );
}

/** Events of a session timeline fetched at most (the latest ones, as of the chosen time). */
const TIMELINE_LIMIT = 200;
