// Overview: readiness, versions, uptime, counts, the last ingest and the pending approvals.
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { duration, formatNumber, QueryState, useTitle, When } from "../common.js";
import { useApi } from "../context.js";
import type { Overview } from "../types.js";

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
                  <dd>{duration(data.uptime_seconds)}</dd>
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
                  <dd>{formatNumber(data.counts.clients_active)}</dd>
                  <dt>Web clients (active)</dt>
                  <dd>{formatNumber(data.counts.oauth_clients_active)}</dd>
                  <dt>Documents</dt>
                  <dd>{formatNumber(data.counts.documents)}</dd>
                  <dt>Chunks</dt>
                  <dd>{formatNumber(data.counts.chunks)}</dd>
                  <dt>Memory pages</dt>
                  <dd>{formatNumber(data.counts.pages)}</dd>
                </dl>
              </section>
              <section className="panel" aria-labelledby="ov-ingest">
                <h2 id="ov-ingest">Last ingest</h2>
                {data.last_ingest ? (
                  <>
                    <p>
                      <span className="mono">{data.last_ingest.connector}</span>,{" "}
                      <When iso={data.last_ingest.at} />
                      {data.last_ingest.complete ? "" : " (incomplete)"}
                    </p>
                    <p>
                      {data.last_ingest.added} added, {data.last_ingest.updated} updated,{" "}
                      {data.last_ingest.unchanged} unchanged, {data.last_ingest.removed} removed,{" "}
                      {data.last_ingest.skipped} skipped
                    </p>
                    {data.last_ingest.error && <p className="error">Error: {data.last_ingest.error}</p>}
                  </>
                ) : (
                  <p className="muted">No connector has ingested yet.</p>
                )}
              </section>
            </div>
          );
        }}
      </QueryState>
    </>
  );
}
