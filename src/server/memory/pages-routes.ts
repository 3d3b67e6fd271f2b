// Memory pages over HTTP for the console (memory:read): the page list, one page with its versions and
// backlinks, and the link graph around a page. Read-only; writes stay with the approval gate.
import { Hono } from "hono";
import { z } from "zod";
import type { PageDetail, PageGraph, PageList, PageSummary } from "../../protocol/console-api.js";
import { requireScope } from "../http/bearer-auth.js";
import type { GatewayEnv } from "../http/env.js";
import { problem } from "../http/problem.js";
import { parseQuery } from "../http/query.js";
import { GLOBAL_SCOPE, normalizePagePath, normalizeScope } from "./page-path.js";
import type { MemoryStore, PageRecord } from "./store.js";

export const DEFAULT_PAGE_LIST = 50;
export const MAX_PAGE_LIST = 200;
/** Nodes of a graph answer at most; the rest is cut (and `truncated` says so). */
export const MAX_GRAPH_NODES = 200;
/** Edges read per step (a page may link to thousands): more than this and the graph is cut. */
export const MAX_GRAPH_EDGES = 2_000;

const listSchema = z.object({
  q: z.string().min(1).max(256).optional(),
  scope: z.string().min(1).max(256).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIST).default(DEFAULT_PAGE_LIST),
  cursor: z.string().min(1).max(512).optional(),
});
const pageSchema = z.object({ scope: z.string().min(1).max(256), path: z.string().min(1).max(512) });
const graphSchema = pageSchema.extend({ depth: z.enum(["1", "2"]).default("1").transform(Number) });

export function pageSummary(page: PageRecord): PageSummary {
  return {
    scope: page.scope,
    path: page.path,
    title: page.title,
    version: page.version,
    updated_at: page.updated_at,
    author: page.author,
    tags: page.tags,
    feedback: page.feedback,
    flagged: page.feedback.stale + page.feedback.wrong > 0,
  };
}

export function createPageRoutes(deps: { store: MemoryStore | undefined }): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  const read = requireScope("memory:read");
  if (!deps.store) {
    for (const route of ["/pages", "/page", "/graph"])
      app.get(route, read, (c) => problem(c, 503, "memory_unavailable", "the memory service is unavailable"));
    return app;
  }
  const store = deps.store;

  app.get("/pages", read, async (c) => {
    const query = parseQuery(c, listSchema);
    if (!query.ok) return query.response;
    const { q, scope, limit, cursor } = query.value;
    // A bad scope or cursor is a USAGE error: the app's error map answers it with 400.
    const found = await store.listPages({
      limit,
      ...(q ? { q } : {}),
      ...(scope ? { scope: normalizeScope(scope) } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const list: PageList = { pages: found.pages.map(pageSummary), next_cursor: found.next_cursor };
    return c.json(list);
  });

  app.get("/page", read, async (c) => {
    const query = parseQuery(c, pageSchema);
    if (!query.ok) return query.response;
    const scope = normalizeScope(query.value.scope);
    const path = normalizePagePath(query.value.path);
    const page = await store.getPage(scope, path);
    if (!page) return problem(c, 404, "not_found", `no page ${scope}:${path}`);
    const [versions, backlinks] = await Promise.all([
      store.pageVersions(scope, path),
      store.backlinks(scope, path),
    ]);
    const detail: PageDetail = {
      page: {
        ...pageSummary(page),
        body: page.body,
        relations: page.relations,
        expires_at: page.expires_at,
        created_at: page.created_at,
      },
      versions,
      backlinks,
    };
    return c.json(detail);
  });

  app.get("/graph", read, async (c) => {
    const query = parseQuery(c, graphSchema);
    if (!query.ok) return query.response;
    const scope = normalizeScope(query.value.scope);
    const path = normalizePagePath(query.value.path);
    if (!(await store.getPage(scope, path))) return problem(c, 404, "not_found", `no page ${scope}:${path}`);
    return c.json(await pageGraph(store, scope, path, query.value.depth));
  });
  return app;
}

/**
 * The pages within `depth` links of one page, either direction, in its scope and _global (where reads look).
 * Nodes are named by path, as edges are; a link to a page that does not exist is a node with `missing`.
 */
export async function pageGraph(
  store: MemoryStore,
  scope: string,
  path: string,
  depth: number,
): Promise<PageGraph & { truncated: boolean }> {
  const scopes = scope === GLOBAL_SCOPE ? [GLOBAL_SCOPE] : [scope, GLOBAL_SCOPE];
  const nodes = new Set([path]);
  const edges = new Map<string, { from: string; to: string; type: string }>();
  let frontier = [path];
  let truncated = false;
  for (let step = 0; step < depth && frontier.length > 0; step += 1) {
    const next: string[] = [];
    const around = await store.edgesAround(scopes, frontier, MAX_GRAPH_EDGES);
    if (around.length >= MAX_GRAPH_EDGES) truncated = true;
    for (const edge of around) {
      for (const end of [edge.from, edge.to]) {
        if (nodes.has(end)) continue;
        if (nodes.size >= MAX_GRAPH_NODES) {
          truncated = true;
          continue;
        }
        nodes.add(end);
        next.push(end);
      }
      if (nodes.has(edge.from) && nodes.has(edge.to)) {
        edges.set(JSON.stringify([edge.from, edge.type, edge.to]), {
          from: edge.from,
          to: edge.to,
          type: edge.type,
        });
      }
    }
    frontier = next;
  }
  // One query for every node's title; a path found in several scopes takes the first scope (project, then _global).
  const titles = new Map<string, { scope: string; title: string }>();
  for (const row of await store.pageTitles(scopes, [...nodes])) {
    const known = titles.get(row.path);
    if (!known || scopes.indexOf(row.scope) < scopes.indexOf(known.scope)) titles.set(row.path, row);
  }
  const resolved = [...nodes].map((node) => {
    const page = titles.get(node);
    return page
      ? { scope: page.scope, path: node, title: page.title, missing: false }
      : { scope, path: node, title: node, missing: true };
  });
  return { center: { scope, path }, nodes: resolved, edges: [...edges.values()], truncated };
}
