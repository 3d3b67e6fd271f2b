// @vitest-environment happy-dom
// The overview, activity, knowledge and clients views against a fake gateway answering the contract's shapes.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { enrolledLaptop, json, type RecordedRequest, renderConsole } from "./test-support.js";
import type { Activity, Overview, PageDetail, PageGraph, PageList, WebClient } from "./types.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const AT = "2026-12-01T12:00:00.000Z";
const figures = (calls: number) => ({ calls, errors: 1, p50_ms: 10, p95_ms: 90, tokens: calls * 10 });

describe("overview", () => {
  it("shows readiness, degraded parts and the pending count linking to approvals", async () => {
    const overview: Overview = {
      server_version: "0.1.0",
      protocol_version: "2025-06-18",
      started_at: AT,
      uptime_seconds: 3700,
      ready: { status: "degraded", degraded: ["embeddings"], failed: [] },
      counts: {
        clients_active: 2,
        oauth_clients_active: 1,
        documents: 5,
        chunks: 50,
        pages: 3,
        pending_approvals: 7,
      },
      last_ingest: null,
      ingests: [],
    };
    renderConsole("/console/", { routes: { "GET /v1/admin/overview": overview } });
    expect(await screen.findByText(/Degraded: the server answers/)).toBeTruthy();
    expect(screen.getByText("embeddings")).toBeTruthy();
    expect(screen.getByText("1 h 1 min")).toBeTruthy();
    fireEvent.click(screen.getByRole("link", { name: "Review 7 pending approvals" }));
    expect(await screen.findByRole("heading", { level: 1, name: "Approvals" })).toBeTruthy();
    expect(window.location.pathname).toBe("/console/approvals");
  });

  it("lists every connector's last ingest, not only the newest", async () => {
    const ingest = (connector: string, at: string, added: number) => ({
      connector,
      at,
      added,
      updated: 0,
      unchanged: 3,
      removed: 0,
      skipped: 1,
      skipped_by_reason: {},
      skipped_examples: [],
      complete: connector !== "wiki",
    });
    const newest = ingest("docs", AT, 12_345);
    const overview: Overview = {
      server_version: "0.1.0",
      protocol_version: "2025-06-18",
      started_at: AT,
      uptime_seconds: 60,
      ready: { status: "ready", degraded: [], failed: [] },
      counts: {
        clients_active: 0,
        oauth_clients_active: 0,
        documents: 0,
        chunks: 0,
        pages: 0,
        pending_approvals: 0,
      },
      last_ingest: newest,
      ingests: [newest, ingest("wiki", "2026-11-30T08:00:00.000Z", 4)],
    };
    renderConsole("/console/", { routes: { "GET /v1/admin/overview": overview } });
    const table = await screen.findByRole("table", { name: "Each connector's last ingest, newest first" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => within(row).getByRole("rowheader").textContent)).toEqual(["docs", "wiki"]);
    expect(within(rows[0] as HTMLElement).getByText("12,345").className).toContain("num");
    expect(within(rows[1] as HTMLElement).getByText("incomplete")).toBeTruthy();
    // The table scrolls inside a named, focusable region, never the page.
    const region = table.closest("section.table-scroll");
    expect(region?.getAttribute("tabindex")).toBe("0");
    expect(screen.getByRole("region", { name: "Each connector's last ingest, newest first" })).toBe(region);
  });

  it("shows a query's error state", async () => {
    renderConsole("/console/", {
      routes: {
        "GET /v1/admin/overview": () => json(403, { error: "forbidden", message: "Needs status:read." }),
      },
    });
    expect((await screen.findByRole("alert")).textContent).toContain("Needs status:read.");
  });
});

describe("activity", () => {
  const activity: Activity = {
    since: AT,
    until: AT,
    bucket: "hour",
    totals: figures(30),
    series: [
      { ...figures(10), start: "2026-12-01T10:00:00.000Z" },
      { ...figures(20), start: "2026-12-01T11:00:00.000Z" },
    ],
    by_tool: [{ key: "context_search", ...figures(30) }],
    by_credential: [{ key: "cli_1", ...figures(30) }],
    by_session: [{ key: "ses_9", ...figures(30) }],
  };

  it("charts the calls with the totals as its label, has a table view and opens a session timeline", async () => {
    const { container, gateway } = renderConsole("/console/activity", {
      routes: {
        "GET /v1/audit/activity": activity,
        "GET /v1/audit/timeline": {
          session_id: "ses_9",
          as_of: AT,
          events: [
            {
              id: "evt_1",
              kind: "decision",
              project: "demo",
              recorded_at: AT,
              valid_from: null,
              valid_to: null,
              data: { note: "<script>x</script>" },
            },
            {
              id: "evt_2",
              kind: "tool_call",
              project: "demo",
              recorded_at: AT,
              valid_from: null,
              valid_to: null,
              credential_id: "cli_other",
              data_withheld: true,
            },
          ],
        },
      },
    });
    const chart = await screen.findByRole("img", { name: /^Tool calls over time: 30 calls, 1 errors/ });
    expect(chart.querySelectorAll("rect.bar-calls")).toHaveLength(2);
    expect(screen.getByText("Tool calls over time")).toBeTruthy();
    const request = gateway.requests.find((r) => r.path.startsWith("/v1/audit/activity"));
    expect(request?.path).toContain("bucket=hour");
    fireEvent.change(screen.getByLabelText("Window"), { target: { value: "hour" } });
    await waitFor(() =>
      expect(
        gateway.requests.some(
          (r) => r.path.startsWith("/v1/audit/activity") && r.path.includes("bucket=minute"),
        ),
      ).toBe(true),
    );
    fireEvent.click(screen.getByRole("button", { name: "Show table" }));
    expect(await screen.findByRole("table", { name: /Tool calls per/ })).toBeTruthy();
    for (const name of ["By tool", "By credential", "By session"]) {
      expect(screen.getByRole("table", { name })).toBeTruthy();
    }
    fireEvent.click(
      within(screen.getByRole("table", { name: "By session" })).getByRole("button", { name: "ses_9" }),
    );
    expect(await screen.findByText(/"note": "<script>x<\/script>"/)).toBeTruthy();
    // Another credential's episode: its metadata and a plain statement, never an empty box.
    expect(screen.getByText(/Content withheld: only the credential that recorded it/)).toBeTruthy();
    expect(gateway.requests.some((r) => r.path === "/v1/audit/timeline?session_id=ses_9&limit=200")).toBe(
      true,
    );
    expect(screen.getByLabelText("As of")).toBeTruthy();
    expect(container.querySelector("script")).toBeNull();
  });
});

describe("knowledge", () => {
  const page = {
    scope: "team",
    path: "a.md",
    title: "<script>alert(1)</script>",
    version: 2,
    updated_at: AT,
    author: "agent",
    tags: [],
    feedback: { stale: 1, wrong: 0 },
    flagged: true,
  };
  const pages: PageList = {
    pages: [page, { ...page, path: "b.md", title: "Page B", feedback: {}, flagged: false }],
    next_cursor: null,
  };
  const detail = (path: string, title: string): PageDetail => ({
    page: {
      ...page,
      path,
      title,
      body: "<img src=x onerror=alert(1)>",
      relations: {},
      expires_at: null,
      created_at: AT,
    },
    versions: [{ version: 2, title, author: "agent", at: AT }],
    backlinks: [{ from: "b.md", type: "related" }],
  });
  const graph: PageGraph = {
    center: { scope: "team", path: "a.md" },
    nodes: [
      { scope: "team", path: "a.md", title: "A", missing: false },
      { scope: "team", path: "b.md", title: "Page B", missing: false },
      { scope: "team", path: "tag/billing", title: "tag/billing", missing: true },
    ],
    edges: [
      { from: "a.md", to: "b.md", type: "related" },
      { from: "a.md", to: "tag/billing", type: "tagged" },
    ],
  };

  it("lists pages with flags, shows a page as text and opens a neighbour from the graph", async () => {
    const { container } = renderConsole("/console/knowledge", {
      routes: {
        "GET /v1/admin/connectors": { connectors: [] },
        "GET /v1/memory/pages": pages,
        "GET /v1/memory/page": (request: RecordedRequest) =>
          json(200, request.path.includes("b.md") ? detail("b.md", "Page B") : detail("a.md", page.title)),
        "GET /v1/memory/graph": graph,
      },
    });
    expect(await screen.findByText("stale ×1")).toBeTruthy();
    fireEvent.click(screen.getByRole("link", { name: "<script>alert(1)</script>" }));
    const region = await screen.findByRole("region", { name: "Page details" });
    expect((await within(region).findByRole("heading", { level: 2 })).textContent).toBe(
      "<script>alert(1)</script>",
    );
    expect(within(region).getByText("<img src=x onerror=alert(1)>")).toBeTruthy();
    expect(container.querySelector("script, img")).toBeNull();
    // A graph node's accessible name is exactly its visible text; a tag is called a tag, not a missing page.
    const figure = (await within(region).findByText("Page B", { selector: "text" })).closest("figure");
    expect(figure?.querySelector("figcaption")?.textContent).toMatch(/tags/);
    expect(figure?.querySelector("figcaption")?.textContent).not.toMatch(/missing/);
    expect(within(region).getByText("#billing", { selector: "text" }).closest("a")).toBeNull();
    fireEvent.click(await within(region).findByRole("link", { name: "Page B" }));
    await waitFor(() => expect(within(region).getByRole("heading", { level: 2 }).textContent).toBe("Page B"));
    expect(new URLSearchParams(window.location.search).get("path")).toBe("b.md");
  });

  it("keeps a page path that looks like a number a plain string in the address bar and the request", async () => {
    const { gateway } = renderConsole("/console/knowledge", {
      routes: {
        "GET /v1/admin/connectors": { connectors: [] },
        "GET /v1/memory/pages": {
          pages: [{ ...page, scope: "2024", path: "2024", title: "Year page" }],
          next_cursor: null,
        },
        "GET /v1/memory/page": detail("2024", "Year page"),
        "GET /v1/memory/graph": graph,
      },
    });
    fireEvent.click(await screen.findByRole("link", { name: "Year page" }));
    const region = await screen.findByRole("region", { name: "Page details" });
    expect((await within(region).findByRole("heading", { level: 2 })).textContent).toBe("Year page");
    expect(window.location.search).toBe("?scope=2024&path=2024");
    expect(gateway.requests.some((r) => r.path === "/v1/memory/page?scope=2024&path=2024")).toBe(true);
  });

  it("searches documents and shows results as untrusted text", async () => {
    const { gateway } = renderConsole("/console/knowledge", {
      routes: {
        "GET /v1/admin/connectors": { connectors: [] },
        "GET /v1/memory/pages": { pages: [], next_cursor: null },
        "GET /v1/context/search": {
          query: "deploy",
          count: 1,
          untrusted: true,
          results: [
            {
              document_id: "d1",
              source: "docs",
              path: "deploy.md",
              title: "Deploying",
              chunk_index: 0,
              score: 0.75,
              snippet: "<b>run</b> the script",
            },
          ],
        },
      },
    });
    fireEvent.change(await screen.findByLabelText("Search documents"), { target: { value: "deploy" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    expect(await screen.findByText("<b>run</b> the script")).toBeTruthy();
    // The count and the warning come with the answer, not as fixed wording.
    expect(screen.getByText(/^1 result for “deploy”\. Results are untrusted/)).toBeTruthy();
    expect(gateway.requests.some((r) => r.path === "/v1/context/search?q=deploy&limit=20")).toBe(true);
  });
});

describe("clients", () => {
  const web: WebClient[] = [
    {
      client_id: "oc_1",
      client_name: "Claude",
      redirect_uris: ["https://example.test/cb"],
      created_at: AT,
      revoked_at: null,
      last_used_at: null,
      grants: [
        {
          id: "gr_1",
          scopes: ["context:read"],
          resource: "r",
          created_at: AT,
          expires_at: AT,
          revoked_at: null,
          last_refreshed_at: null,
        },
      ],
    },
  ];
  const routes = () => {
    const client = enrolledLaptop();
    return {
      "GET /v1/admin/clients": () => json(200, { clients: [client] }),
      "GET /v1/admin/oauth-clients": { clients: web },
      "POST /v1/admin/clients/cli_1/revoke": () => {
        client.revoked_at = AT;
        return json(200, client);
      },
    };
  };

  it("revokes only after the in-page confirmation, with the CSRF token", async () => {
    const { gateway } = renderConsole("/console/clients", {
      session: { role: "admin", scopes: ["clients:read", "clients:revoke"] },
      routes: routes(),
    });
    expect(await screen.findByRole("table", { name: "Enrolled clients" })).toBeTruthy();
    expect(await screen.findByRole("table", { name: "Web clients" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Revoke Claude" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Revoke grant gr_1" })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Revoke laptop" }));
    expect(gateway.requests.some((r) => r.method === "POST")).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Confirm revoke" }));
    expect((await screen.findByRole("status")).textContent).toContain("Revoked client laptop");
    const post = gateway.requests.find((r) => r.method === "POST");
    expect(post?.path).toBe("/v1/admin/clients/cli_1/revoke");
    expect(post?.headers["x-csrf-token"]).toBe("csrf-test-token");
    await waitFor(() => expect(screen.queryByRole("button", { name: "Revoke laptop" })).toBeNull());
  });

  it("tells clients that share a name apart by their id", async () => {
    const twin = { ...enrolledLaptop(), id: "cli_2" };
    renderConsole("/console/clients", {
      session: { role: "admin", scopes: ["clients:read", "clients:revoke"] },
      routes: { ...routes(), "GET /v1/admin/clients": { clients: [enrolledLaptop(), twin] } },
    });
    expect(await screen.findByRole("button", { name: "Revoke laptop (cli_1)" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Revoke laptop (cli_2)" })).toBeTruthy();
  });

  it("disables revoking without clients:revoke", async () => {
    renderConsole("/console/clients", {
      session: { role: "viewer", scopes: ["clients:read"] },
      routes: routes(),
    });
    const button = await screen.findByRole("button", { name: "Revoke laptop" });
    expect((button as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole("button", { name: "Revoke grant gr_1" }) as HTMLButtonElement).disabled).toBe(
      true,
    );
  });
});
