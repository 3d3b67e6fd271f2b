// Knowledge: connectors and their last ingest, a document search, memory pages and one page with its graph.
import { useQuery } from "@tanstack/react-query";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { type FormEvent, useDeferredValue, useState } from "react";
import { pageHref, query } from "../api.js";
import { DataTable, formatNumber, QueryState, useDraft, useTitle, When } from "../common.js";
import { useApi } from "../context.js";
import type { ConnectorView, LastIngest, PageDetail, PageList, SearchResults } from "../types.js";
import { PageGraphView } from "./page-graph.js";

/** The page shown in detail, kept in the URL so graph nodes are real links. */
export interface KnowledgeSearch {
  scope?: string;
  path?: string;
}

export function KnowledgeView() {
  useTitle("Knowledge");
  const search = useSearch({ strict: false }) as KnowledgeSearch;
  return (
    <>
      <h1>Knowledge</h1>
      <Connectors />
      <DocumentSearch />
      <div className="pages-layout">
        <Pages />
        {search.scope !== undefined && search.path !== undefined && (
          <PageView scope={search.scope} path={search.path} />
        )}
      </div>
    </>
  );
}

function ingestText(ingest: LastIngest): string {
  return `${ingest.added} added, ${ingest.updated} updated, ${ingest.unchanged} unchanged, ${ingest.removed} removed, ${ingest.skipped} skipped`;
}

function Connectors() {
  const api = useApi();
  const connectors = useQuery({
    queryKey: ["connectors"],
    queryFn: () => api.get<{ connectors: ConnectorView[] }>("/v1/admin/connectors"),
  });
  return (
    <section aria-labelledby="kn-connectors">
      <h2 id="kn-connectors">Connectors</h2>
      <QueryState query={connectors} label="connectors">
        {() => (
          <DataTable
            caption="Connectors and their last ingest"
            columns={["Name", "Type", "Path", "Documents", "Last ingest", "Result", "Skipped reasons"]}
            empty="No connectors configured."
            rows={(connectors.data?.connectors ?? []).map((connector) => (
              <tr key={connector.name}>
                <th scope="row">{connector.name}</th>
                <td>{connector.type}</td>
                <td className="mono">{connector.path}</td>
                <td>{formatNumber(connector.documents)}</td>
                <td>
                  <When iso={connector.last_ingest_at} />
                </td>
                <td>
                  {connector.last_ingest ? ingestText(connector.last_ingest) : "—"}
                  {connector.last_ingest && !connector.last_ingest.complete && " (incomplete)"}
                  {connector.last_ingest?.error && (
                    <span className="error"> Error: {connector.last_ingest.error}</span>
                  )}
                </td>
                <td>
                  {connector.last_ingest &&
                  Object.keys(connector.last_ingest.skipped_by_reason).length > 0 ? (
                    <ul className="plain">
                      {Object.entries(connector.last_ingest.skipped_by_reason).map(([reason, count]) => (
                        <li key={reason}>
                          {reason}: {count}
                        </li>
                      ))}
                      {connector.last_ingest.skipped_examples.slice(0, 3).map((example) => (
                        <li key={example.path} className="muted">
                          e.g. <span className="mono">{example.path}</span> ({example.reason})
                        </li>
                      ))}
                    </ul>
                  ) : (
                    "none"
                  )}
                </td>
              </tr>
            ))}
          />
        )}
      </QueryState>
    </section>
  );
}

function DocumentSearch() {
  const api = useApi();
  // Kept as a draft: what was typed survives an idle sign-out.
  const [text, setText] = useDraft("knowledge-search");
  const [submitted, setSubmitted] = useState("");
  const results = useQuery({
    queryKey: ["search", submitted],
    queryFn: () => api.get<SearchResults>(`/v1/context/search${query({ q: submitted, limit: 20 })}`),
    enabled: submitted.length > 0,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(text.trim());
  };
  return (
    <section aria-labelledby="kn-search">
      <h2 id="kn-search">Document search</h2>
      {/* biome-ignore lint/a11y/useSemanticElements: React's JSX types have no <search> element yet */}
      <form className="toolbar" role="search" onSubmit={submit}>
        <label htmlFor="kn-search-input">Search documents</label>
        <input
          id="kn-search-input"
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
        <button type="submit">Search</button>
      </form>
      {submitted.length > 0 && (
        <QueryState query={results} label="search results">
          {() => {
            const data = results.data as SearchResults;
            return (
              <>
                <p className="muted">
                  {data.count} result{data.count === 1 ? "" : "s"} for “{data.query}”. Results are untrusted
                  content from your sources, shown as plain text.
                </p>
                <ol className="results">
                  {data.results.map((result) => (
                    <li key={`${result.document_id}-${result.chunk_index}`}>
                      <p>
                        <strong>{result.title}</strong>{" "}
                        <span className="mono">
                          {result.source}:{result.path}
                        </span>{" "}
                        <span className="muted">score {result.score.toFixed(3)}</span>
                      </p>
                      <p className="snippet">{result.snippet}</p>
                    </li>
                  ))}
                </ol>
              </>
            );
          }}
        </QueryState>
      )}
    </section>
  );
}

function Pages() {
  const api = useApi();
  const navigate = useNavigate();
  const [filter, setFilter] = useDraft("knowledge-filter");
  const deferred = useDeferredValue(filter.trim());
  const pages = useQuery({
    queryKey: ["pages", deferred],
    queryFn: () => api.get<PageList>(`/v1/memory/pages${query({ q: deferred, limit: 100 })}`),
  });
  return (
    <section aria-labelledby="kn-pages" className="pages">
      <h2 id="kn-pages">Memory pages</h2>
      <div className="toolbar">
        <label htmlFor="kn-filter">Filter pages</label>
        <input
          id="kn-filter"
          type="search"
          value={filter}
          onChange={(event) => setFilter(event.target.value)}
        />
      </div>
      <QueryState query={pages} label="memory pages">
        {() => {
          const data = pages.data as PageList;
          if (data.pages.length === 0) return <p className="muted">No pages.</p>;
          return (
            <>
              {data.next_cursor && (
                <p className="muted">
                  The {data.pages.length} most recently updated pages; filter to find others.
                </p>
              )}
              <ul className="page-list">
                {data.pages.map((page) => (
                  <li key={`${page.scope}:${page.path}`}>
                    <a
                      href={pageHref(page.scope, page.path)}
                      onClick={(event) => {
                        event.preventDefault();
                        void navigate({ to: "/knowledge", search: { scope: page.scope, path: page.path } });
                      }}
                    >
                      {page.title}
                    </a>{" "}
                    <span className="mono muted">
                      {page.scope}:{page.path}
                    </span>{" "}
                    <span className="muted">v{page.version}</span>
                    {(page.feedback.stale ?? 0) > 0 && (
                      <span className="flag">stale ×{page.feedback.stale}</span>
                    )}
                    {(page.feedback.wrong ?? 0) > 0 && (
                      <span className="flag">wrong ×{page.feedback.wrong}</span>
                    )}
                  </li>
                ))}
              </ul>
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** The console URL of a page's detail (used as a real href; clicks navigate in-app). */
function PageView({ scope, path }: { scope: string; path: string }) {
  const api = useApi();
  const detail = useQuery({
    queryKey: ["page", scope, path],
    queryFn: () => api.get<PageDetail>(`/v1/memory/page${query({ scope, path })}`),
  });
  return (
    <section aria-label="Page details" className="panel page-detail">
      <QueryState query={detail} label="the page">
        {() => {
          const { page, versions, backlinks } = detail.data as PageDetail;
          return (
            <>
              <h2>{page.title}</h2>
              <p className="mono muted">
                {page.scope}:{page.path} · version {page.version} by {page.author} · updated{" "}
                <When iso={page.updated_at} />
              </p>
              {page.flagged && (
                <p className="flag-note">Flagged: agents or people reported this page as stale or wrong.</p>
              )}
              <h3>Body</h3>
              <pre className="page-body">{page.body}</pre>
              <h3>Feedback</h3>
              <ul className="plain inline">
                {Object.entries(page.feedback).map(([kind, count]) => (
                  <li key={kind}>
                    {kind.replace("_", " ")}: {count}
                  </li>
                ))}
              </ul>
              <h3>Versions</h3>
              <ol className="plain">
                {versions.slice(0, SHOWN).map((version) => (
                  <li key={version.version}>
                    v{version.version} “{version.title}” by {version.author}, <When iso={version.at} />
                    {version.deleted && " (deleted)"}
                  </li>
                ))}
              </ol>
              <MoreNote shown={SHOWN} total={versions.length} />
              <h3>Backlinks</h3>
              {backlinks.length === 0 ? (
                <p className="muted">No page links here.</p>
              ) : (
                <ul className="plain">
                  {backlinks.slice(0, SHOWN).map((link) => (
                    <li key={`${link.from}-${link.type}`}>
                      <span className="mono">{link.from}</span> ({link.type})
                    </li>
                  ))}
                </ul>
              )}
              <MoreNote shown={SHOWN} total={backlinks.length} />
              <h3>Graph</h3>
              <PageGraphView scope={scope} path={path} />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/** Rows of a page's versions and backlinks shown; a page rewritten or linked thousands of times says how many more. */
const SHOWN = 50;

function MoreNote({ shown, total }: { shown: number; total: number }) {
  return total > shown ? <p className="muted">and {total - shown} more</p> : null;
}
