// Memory pages as MCP resources: ivoai://memory/{scope}/{+path}, listed newest first (the pages list's keyset),
// read as their markdown, and completed from the scopes and paths that hold pages.
import { IvoaiError } from "../../shared/errors.js";
import {
  expandTemplate,
  type ListedResource,
  MAX_COMPLETION_VALUES,
  type ResourceSpec,
} from "../mcp/resources.js";
import { normalizePagePath, normalizeScope } from "./page-path.js";
import type { MemoryStore, PageRecord } from "./store.js";
import { describePage } from "./tools.js";

export const MEMORY_RESOURCE_TEMPLATE = "ivoai://memory/{scope}/{+path}";

/** A page's URI: the scope and each path segment percent-encoded (scopes may hold ':' and '/'). */
export function pageUri(scope: string, path: string): string {
  return expandTemplate(MEMORY_RESOURCE_TEMPLATE, { scope, path });
}

const listed = (page: PageRecord): ListedResource => ({
  uri: pageUri(page.scope, page.path),
  name: `${page.scope}/${page.path}`,
  title: page.title,
  mimeType: "text/markdown",
  size: Buffer.byteLength(page.body),
  annotations: { lastModified: page.updated_at },
});

/** The memory resource family over a store. */
export function createMemoryResources(store: MemoryStore): ResourceSpec {
  return {
    name: "memory-page",
    template: MEMORY_RESOURCE_TEMPLATE,
    scope: "memory:read",
    title: "Memory pages",
    description:
      "One page of the organisation's shared memory by its scope (a project such as git:acme/api, or _global) " +
      "and path, as markdown. Changes go through memory_write_page and a person's approval.",
    mimeType: "text/markdown",
    async list(after, limit) {
      const { pages, next_cursor } = await store.listPages({
        limit,
        ...(after === undefined ? {} : { cursor: after }),
      });
      return { resources: pages.map(listed), ...(next_cursor ? { next: next_cursor } : {}) };
    },
    async read(variables) {
      const scope = normalizeScope(variables.scope as string);
      const path = normalizePagePath(variables.path as string);
      // An address is read as written: one that only normalises to a page is not that page's URI.
      if (path !== variables.path) throw new IvoaiError("USAGE", `page paths are given normalised (${path})`);
      const page = await store.getPage(scope, path);
      if (!page) return undefined;
      return {
        text: page.body,
        mimeType: "text/markdown",
        untrusted: false,
        meta: describePage(page),
      };
    },
    complete: {
      async scope(value) {
        const { scopes, total } = await store.pageScopes(value, MAX_COMPLETION_VALUES);
        return { values: scopes, total };
      },
      async path(value, chosen) {
        if (!chosen.scope) return { values: [], total: 0 };
        const { paths, total } = await store.pagePaths(chosen.scope, value, MAX_COMPLETION_VALUES);
        return { values: paths, total };
      },
    },
  };
}
