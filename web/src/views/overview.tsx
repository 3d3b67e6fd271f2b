// Overview: readiness, versions, uptime, counts, every connector's last ingest and the pending approvals.
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { DataTable, duration, formatNumber, QueryState, useTitle, When } from "../common.js";
import { useApi } from "../context.js";
import type { LastIngest, Overview } from "../types.js";

const READY_TEXT = {
  ready: "Ready: every part is working.",
  degraded: "Degraded: the server answers, but some parts are not working fully.",
  not_ready: "Not ready: the server cannot serve requests right now.",
} as const;

export function OverviewView() {
  useTitle("Overview");
  const api = useApi();
  const overview = useQuery({
    queryKey: ["overview"],
    queryFn: () => api.get<Overview>("/v1/admin/overview"),
    refetchInterval: 10_000,
  });
  return (
    <>
      <h1>Overview</h1>
      <QueryState query={overview} label="the overview">
        {() => {
          const data = overview.data as Overview;
          return (
            <div className="cards">
              <section className="panel" aria-labelledby="ov-health">
                <h2 id="ov-health">Health</h2>
                <p className={`ready ready-${data.ready.status}`}>{READY_TEXT[data.ready.status]}</p>
                {data.ready.degraded.length > 0 && (
                  <p>
                    Degraded parts: <span className="mono">{data.ready.degraded.join(", ")}</span>
                  </p>
                )}
                {data.ready.failed.length > 0 && (
                  <p>
                    Failed parts: <span className="mono">{data.ready.failed.join(", ")}</span>
                  </p>
                )}
                <dl className="facts">
                  <dt>Server version</dt>
                  <dd>{data.server_version}</dd>
                  <dt>Protocol version</dt>
                  <dd>{data.protocol_version}</dd>
                  <dt>Started</dt>
                  <dd>
                    <When iso={data.started_at} />
                  </dd>
                  <dt>Uptime</dt>
                  <dd className="num">{duration(data.uptime_seconds)}</dd>
                </dl>
              </section>
              <section className="panel" aria-labelledby="ov-approvals">
                <h2 id="ov-approvals">Pending approvals</h2>
                <p className="big">{formatNumber(data.counts.pending_approvals)}</p>
                <p>
                  <Link to="/approvals">
                    Review {formatNumber(data.counts.pending_approvals)} pending approval
                    {data.counts.pending_approvals === 1 ? "" : "s"}
                  </Link>
                </p>
              </section>
              <section className="panel" aria-labelledby="ov-counts">
                <h2 id="ov-counts">Counts</h2>
                <dl className="facts">
                  <dt>Enrolled clients (active)</dt>
                  <dd className="num">{formatNumber(data.counts.clients_active)}</dd>
                  <dt>Web clients (active)</dt>
                  <dd className="num">{formatNumber(data.counts.oauth_clients_active)}</dd>
                  <dt>Documents</dt>
                  <dd className="num">{formatNumber(data.counts.documents)}</dd>
                  <dt>Chunks</dt>
                  <dd className="num">{formatNumber(data.counts.chunks)}</dd>
                  <dt>Memory pages</dt>
                  <dd className="num">{formatNumber(data.counts.pages)}</dd>
                </dl>
              </section>
              <section className="panel wide" aria-labelledby="ov-ingest">
                <h2 id="ov-ingest">Last ingest per connector</h2>
                <Ingests ingests={ingestsOf(data)} />
              </section>
            </div>
          );
        }}
      </QueryState>
    </>
  );
}

type ConnectorIngest = LastIngest & { connector: string };

/** Every connector's last ingest; a server older than `ingests` sends only the newest one. */
function ingestsOf(data: Overview): ConnectorIngest[] {
  if (Array.isArray(data.ingests)) return data.ingests;
  return data.last_ingest ? [data.last_ingest] : [];
}

function Ingests({ ingests }: { ingests: ConnectorIngest[] }) {
  if (ingests.length === 0) return <p className="muted">No connector has ingested yet.</p>;
  return (
    <DataTable
      caption="Each connector's last ingest, newest first"
      columns={["Connector", "When", "Added", "Updated", "Unchanged", "Removed", "Skipped", "Result"]}
      rows={ingests.map((ingest) => (
        <tr key={ingest.connector}>
          <th scope="row" className="mono">
            {ingest.connector}
          </th>
          <td>
            <When iso={ingest.at} />
          </td>
          <td className="num">{formatNumber(ingest.added)}</td>
          <td className="num">{formatNumber(ingest.updated)}</td>
          <td className="num">{formatNumber(ingest.unchanged)}</td>
          <td className="num">{formatNumber(ingest.removed)}</td>
          <td className="num">{formatNumber(ingest.skipped)}</td>
          <td>
            {ingest.error ? (
              <span className="error">Error: {ingest.error}</span>
            ) : ingest.complete ? (
              "complete"
            ) : (
              "incomplete"
            )}
          </td>
        </tr>
      ))}
    />
  );
}
