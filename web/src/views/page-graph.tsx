// The knowledge graph around one page: nodes on a circle around it, each a focusable link to that page. A link's
// accessible name is its visible text; tags (tag/… nodes a page is tagged with) are not missing pages.
import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { pageHref, query } from "../api.js";
import { QueryState } from "../common.js";
import { useApi } from "../context.js";
import type { PageGraph } from "../types.js";

const SIZE = 360;
const RADIUS = 130;
/** Room left and right of the circle so labels of the outermost nodes are not cut off. */
const MARGIN_X = 60;

/** What a node is: an existing page, a tag (the server's `tag/<name>` node, never a page), or a missing page. */
export type NodeKind = "page" | "tag" | "missing";

export function nodeKind(node: { path: string; missing: boolean }): NodeKind {
  if (!node.missing) return "page";
  return node.path.startsWith("tag/") ? "tag" : "missing";
}

/** The visible label: a tag shows as "#name"; long titles are shortened. */
export function nodeLabel(node: { path: string; title: string; missing: boolean }): string {
  if (nodeKind(node) === "tag") return shorten(`#${node.path.slice("tag/".length)}`);
  return shorten(node.title || node.path);
}

function shorten(text: string, max = 22): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function PageGraphView({ scope, path }: { scope: string; path: string }) {
  const api = useApi();
  const navigate = useNavigate();
  const graph = useQuery({
    queryKey: ["graph", scope, path],
    queryFn: () => api.get<PageGraph>(`/v1/memory/graph${query({ scope, path, depth: 1 })}`),
  });
  return (
    <QueryState query={graph} label="the graph">
      {() => {
        const data = graph.data as PageGraph;
        const others = data.nodes.filter(
          (node) => !(node.scope === data.center.scope && node.path === data.center.path),
        );
        const centre = data.nodes.find(
          (node) => node.scope === data.center.scope && node.path === data.center.path,
        ) ?? { ...data.center, title: data.center.path, missing: false };
        const positions = new Map<string, { x: number; y: number }>();
        // Edges name pages by path (same scope) or by scope:path; both are looked up.
        const place = (node: { scope: string; path: string }, at: { x: number; y: number }) => {
          positions.set(node.path, at);
          positions.set(`${node.scope}:${node.path}`, at);
        };
        place(centre, { x: SIZE / 2, y: SIZE / 2 });
        others.forEach((node, index) => {
          const angle = (2 * Math.PI * index) / Math.max(1, others.length) - Math.PI / 2;
          place(node, { x: SIZE / 2 + RADIUS * Math.cos(angle), y: SIZE / 2 + RADIUS * Math.sin(angle) });
        });
        if (others.length === 0)
          return <p className="muted">This page has no links to or from other pages.</p>;
        return (
          <figure className="graph">
            <svg viewBox={`${-MARGIN_X} 0 ${SIZE + 2 * MARGIN_X} ${SIZE}`}>
              <title>Pages linked to or from {data.center.path}</title>
              <g>
                {data.edges.map((edge) => {
                  const from = positions.get(edge.from);
                  const to = positions.get(edge.to);
                  if (!from || !to) return null;
                  return (
                    <line
                      key={`${edge.from}-${edge.type}-${edge.to}`}
                      className="edge"
                      x1={from.x}
                      y1={from.y}
                      x2={to.x}
                      y2={to.y}
                    />
                  );
                })}
              </g>
              {[centre, ...others].map((node) => {
                const at = positions.get(`${node.scope}:${node.path}`);
                if (!at) return null;
                const isCentre = node === centre;
                const kind = nodeKind(node);
                const label = nodeLabel(node);
                const shape = (
                  <>
                    <circle
                      cx={at.x}
                      cy={at.y}
                      r={isCentre ? 12 : 8}
                      className={isCentre ? "node centre" : "node"}
                    />
                    <text x={at.x} y={at.y + (isCentre ? 28 : 22)} textAnchor="middle">
                      {label}
                    </text>
                  </>
                );
                if (isCentre || kind !== "page") {
                  return (
                    <g key={`${node.scope}:${node.path}`} className={kind === "page" ? undefined : kind}>
                      {shape}
                    </g>
                  );
                }
                // No aria-label: the link's name is the text it shows (WCAG 2.5.3, label in name).
                return (
                  <a
                    key={`${node.scope}:${node.path}`}
                    href={pageHref(node.scope, node.path)}
                    onClick={(event) => {
                      event.preventDefault();
                      void navigate({ to: "/knowledge", search: { scope: node.scope, path: node.path } });
                    }}
                  >
                    {shape}
                  </a>
                );
              })}
            </svg>
            <figcaption>
              Pages linked to or from <span className="mono">{data.center.path}</span>:{" "}
              <span className="legend legend-page">pages</span>
              {others.some((node) => nodeKind(node) === "tag") && (
                <span className="legend legend-tag">tags</span>
              )}
              {others.some((node) => nodeKind(node) === "missing") && (
                <span className="legend legend-missing">missing pages (linked, not written yet)</span>
              )}
              {data.truncated && "; more linked pages were left out"}
            </figcaption>
          </figure>
        );
      }}
    </QueryState>
  );
}
