// Code-based routes under /console: one per view, inside the signed-in layout.
import { createRootRoute, createRoute, createRouter, type RouterHistory } from "@tanstack/react-router";
import { Layout, NotFound } from "./layout.js";
import { ActivityView } from "./views/activity.js";
import { ApprovalsView } from "./views/approvals.js";
import { validateApprovalSearch } from "./views/approvals-search.js";
import { AuditView } from "./views/audit.js";
import { ClientsView } from "./views/clients.js";
import { type KnowledgeSearch, KnowledgeView } from "./views/knowledge.js";
import { OverviewView } from "./views/overview.js";
import { SessionsView } from "./views/sessions.js";

export function createConsoleRouter(history?: RouterHistory) {
  const rootRoute = createRootRoute({ component: Layout, notFoundComponent: NotFound });
  // One view for the queue and an open request (/approvals/<id>, a link to paste in chat): the list stays
  // mounted while requests open and close, and its filters live in the search params.
  const approvalsRoute = createRoute({
    getParentRoute: () => rootRoute,
    path: "/approvals",
    component: ApprovalsView,
    validateSearch: validateApprovalSearch,
  });
  const routeTree = rootRoute.addChildren([
    createRoute({ getParentRoute: () => rootRoute, path: "/", component: OverviewView }),
    approvalsRoute.addChildren([
      createRoute({ getParentRoute: () => approvalsRoute, path: "/" }),
      createRoute({ getParentRoute: () => approvalsRoute, path: "$id" }),
    ]),
    createRoute({ getParentRoute: () => rootRoute, path: "/activity", component: ActivityView }),
    createRoute({
      getParentRoute: () => rootRoute,
      path: "/knowledge",
      component: KnowledgeView,
      validateSearch: (search: Record<string, unknown>): KnowledgeSearch => {
        const scope = typeof search.scope === "string" ? search.scope : undefined;
        const path = typeof search.path === "string" ? search.path : undefined;
        return scope !== undefined && path !== undefined ? { scope, path } : {};
      },
    }),
    createRoute({ getParentRoute: () => rootRoute, path: "/clients", component: ClientsView }),
    createRoute({ getParentRoute: () => rootRoute, path: "/audit", component: AuditView }),
    createRoute({ getParentRoute: () => rootRoute, path: "/sessions", component: SessionsView }),
  ]);
  return createRouter({
    routeTree,
    basepath: "/console",
    // Search values stay strings: the default JSON parsing would turn a page path like "2024" into a number.
    parseSearch: (text) => Object.fromEntries(new URLSearchParams(text)),
    stringifySearch: (search) => {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(search))
        if (value !== undefined) params.set(key, String(value));
      const text = params.toString();
      return text ? `?${text}` : "";
    },
    ...(history ? { history } : {}),
    defaultPreload: false,
    scrollRestoration: false,
  });
}

declare module "@tanstack/react-router" {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
