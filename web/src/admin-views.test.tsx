// @vitest-environment happy-dom
// The administration views (audit, sessions, clients' last use and revoke focus, a session's tool calls) against
// a fake gateway answering the contract's shapes.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AuditEventRow, ConsoleSessionView, SessionTimeline } from "../../src/protocol/console-api.js";
import { CONSOLE_ROLE_SCOPES } from "../../src/protocol/scopes.js";
import { enrolledLaptop, json, renderConsole } from "./test-support.js";
import type { Activity, EnrolledClient } from "./types.js";
import { AUDIT_PAGE } from "./views/audit.js";

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const AT = "2026-12-01T12:00:00.000Z";
const ADMIN = { role: "admin" as const, scopes: [...CONSOLE_ROLE_SCOPES.admin] };
const VIEWER = { role: "viewer" as const, scopes: [...CONSOLE_ROLE_SCOPES.viewer] };

const toolCall = (id: number, over: Record<string, unknown> = {}): AuditEventRow => ({
  id,
  at: new Date(Date.parse(AT) + id * 1000).toISOString(),
  kind: "tool_call",
  tool: `tool_${id}`,
  credential_id: "cli_1",
  session_id: "s1",
  status: "SUCCESS",
  latency_ms: id,
  ...over,
});

describe("audit view", () => {
  it("lists events newest first, pages back with Older events, filters by the form and exports the same filter", async () => {
    const newest = Array.from({ length: AUDIT_PAGE }, (_, index) => toolCall(100 + index));
    const older = [toolCall(7, { tool: "=cmd()" })];
    const { gateway } = renderConsole("/console/audit", {
      session: VIEWER,
      routes: {
        "GET /v1/audit/events": (request: { path: string }) => {
          const params = new URL(request.path, "http://x").searchParams;
          if (params.get("before") === "100")
            return json(200, { events: older, credential_names: { cli_1: "laptop" } });
          if (params.get("tool") === "memory_write_page")
            return json(200, { events: [toolCall(300, { tool: "memory_write_page" })] });
          return json(200, { events: newest, credential_names: { cli_1: "laptop" } });
        },
        "GET /v1/admin/clients": {
          clients: [
            {
              id: "cli_1",
              name: "laptop",
              scopes: [],
              created_at: AT,
              enrollment_id: "e",
              revoked_at: null,
              last_used_at: null,
            },
          ],
        },
        "GET /v1/admin/oauth-clients": { clients: [] },
      },
    });
    const table = await screen.findByRole("table", { name: /Audit events, newest first/ });
    const firstRows = within(table).getAllByRole("row").slice(1);
    expect(within(firstRows[0] as HTMLElement).getByText("tool_149")).toBeTruthy();
    expect(within(firstRows[0] as HTMLElement).getByText("laptop")).toBeTruthy();
    // The table scrolls inside a focusable region named by its caption.
    expect(table.closest(".table-scroll")?.getAttribute("tabindex")).toBe("0");
    fireEvent.click(screen.getByRole("button", { name: "Older events" }));
    expect(await screen.findByText("=cmd()")).toBeTruthy();
    expect(gateway.requests.some((r) => r.path === `/v1/audit/events?limit=${AUDIT_PAGE}&before=100`)).toBe(
      true,
    );
    // Older than the last page: nothing more to ask for.
    await waitFor(() => expect(screen.queryByRole("button", { name: "Older events" })).toBeNull());

    fireEvent.change(screen.getByLabelText("Tool"), { target: { value: "memory_write_page" } });
    fireEvent.change(screen.getByLabelText("Credential"), { target: { value: "cli_1" } });
    fireEvent.change(screen.getByLabelText("Status"), { target: { value: "FAILED" } });
    fireEvent.change(screen.getByLabelText("Text"), { target: { value: "deploy" } });
    // Nothing is asked until the filters are applied.
    expect(gateway.requests.some((r) => r.path.includes("tool=memory_write_page"))).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Apply filters" }));
    await waitFor(() =>
      expect(gateway.requests.map((r) => r.path)).toContain(
        `/v1/audit/events?credential_id=cli_1&tool=memory_write_page&status=FAILED&q=deploy&limit=${AUDIT_PAGE}`,
      ),
    );
    const jsonl = screen.getByRole("link", { name: "Export JSON Lines" });
    expect(jsonl.getAttribute("href")).toBe(
      "/v1/audit/export?credential_id=cli_1&tool=memory_write_page&status=FAILED&q=deploy&format=jsonl",
    );
    expect(jsonl.hasAttribute("download")).toBe(true);
    expect(screen.getByRole("link", { name: "Export CSV" }).getAttribute("href")).toContain("format=csv");
  });
});

describe("sessions view", () => {
  const session = (over: Partial<ConsoleSessionView>): ConsoleSessionView => ({
    id: "cs_1",
    name: "Ada",
    role: "admin",
    created_at: AT,
    last_seen_at: AT,
    idle_expires_at: AT,
    expires_at: AT,
    revoked_at: null,
    state: "active",
    current: false,
    ...over,
  });

  it("lets an admin revoke a session behind a confirmation that takes focus, with the CSRF token", async () => {
    const eva = session({ id: "cs_2", name: "Eva", role: "viewer" });
    const { gateway } = renderConsole("/console/sessions", {
      session: ADMIN,
      routes: {
        "GET /v1/console/sessions": () =>
          json(200, {
            sessions: [
              session({ current: true }),
              eva,
              session({ id: "cs_3", name: "Old", state: "expired" }),
            ],
          }),
        "POST /v1/console/sessions/cs_2/revoke": () => {
          eva.state = "revoked";
          eva.revoked_at = AT;
          return json(200, eva);
        },
      },
    });
    const table = await screen.findByRole("table", { name: "Console sessions, newest first" });
    expect(within(table).getByText("(this session)")).toBeTruthy();
    expect(within(table).getByText("expired")).toBeTruthy();
    expect(screen.getByRole("link", { name: "Sessions" })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Revoke Eva" }));
    const confirm = screen.getByRole("button", { name: "Confirm revoke" });
    await waitFor(() => expect(document.activeElement).toBe(confirm));
    expect(gateway.requests.some((r) => r.method === "POST")).toBe(false);
    fireEvent.click(confirm);
    expect((await screen.findByRole("status")).textContent).toContain("Revoked Eva's session");
    const post = gateway.requests.find((r) => r.method === "POST");
    expect(post?.path).toBe("/v1/console/sessions/cs_2/revoke");
    expect(post?.headers["x-csrf-token"]).toBe("csrf-test-token");
    expect(document.activeElement).toBe(screen.getByRole("heading", { level: 1, name: "Sessions" }));
    await waitFor(() => expect(screen.queryByRole("button", { name: "Revoke Eva" })).toBeNull());
  });

  it("shows no Sessions link and no session list to a viewer", async () => {
    const { gateway } = renderConsole("/console/sessions", { session: VIEWER, routes: {} });
    expect(await screen.findByText(/Only a console admin/)).toBeTruthy();
    expect(screen.queryByRole("link", { name: "Sessions" })).toBeNull();
    expect(gateway.requests.some((r) => r.path.startsWith("/v1/console/sessions"))).toBe(false);
  });
});

describe("clients: last used and revoke focus", () => {
  it("shows when each client last called, focuses the confirmation and then the heading", async () => {
    const laptop = enrolledLaptop();
    const idle: EnrolledClient = { ...laptop, id: "cli_2", name: "idle", last_used_at: null };
    renderConsole("/console/clients", {
      session: ADMIN,
      routes: {
        "GET /v1/admin/clients": () => json(200, { clients: [laptop, idle] }),
        "GET /v1/admin/oauth-clients": { clients: [] },
        "POST /v1/admin/clients/cli_1/revoke": () => {
          laptop.revoked_at = AT;
          return json(200, laptop);
        },
      },
    });
    const table = await screen.findByRole("table", { name: "Enrolled clients" });
    const [laptopRow, idleRow] = within(table).getAllByRole("row").slice(1) as HTMLElement[];
    expect(
      within(laptopRow as HTMLElement).getByText(
        (_, el) => el?.getAttribute("datetime") === "2026-12-01T11:58:00.000Z",
      ),
    ).toBeTruthy();
    expect(within(idleRow as HTMLElement).getByText("never")).toBeTruthy();
    expect(within(table).getByRole("columnheader", { name: "Last used" })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Revoke laptop" }));
    const confirm = screen.getByRole("button", { name: "Confirm revoke" });
    await waitFor(() => expect(document.activeElement).toBe(confirm));
    fireEvent.click(confirm);
    await screen.findByRole("status");
    expect(document.activeElement).toBe(screen.getByRole("heading", { level: 1, name: "Clients" }));
  });
});

describe("activity: a session's timeline", () => {
  it("lists the session's tool calls with the hook events, by credential name", async () => {
    const figures = { calls: 14, errors: 1, p50_ms: 10, p95_ms: 90, tokens: 100 };
    const activity: Activity = {
      since: AT,
      until: AT,
      bucket: "hour",
      totals: figures,
      series: [],
      by_tool: [],
      by_credential: [],
      by_session: [{ key: "s1", ...figures }],
    };
    const timeline: SessionTimeline = {
      session_id: "s1",
      as_of: AT,
      events: [
        {
          id: "ep_1",
          kind: "session_start",
          source: "episode",
          project: "demo",
          recorded_at: AT,
          valid_from: null,
          valid_to: null,
          data_withheld: true,
          credential_id: "cli_1",
          credential_name: "laptop",
        },
        {
          id: "audit:5",
          kind: "tool_call",
          source: "tool_call",
          project: "",
          recorded_at: "2026-12-01T12:00:01.000Z",
          valid_from: null,
          valid_to: null,
          credential_id: "cli_1",
          credential_name: "laptop",
          tool: "memory_write_page",
          endpoint: "ivoai-memory",
          status: "FAILED",
          latency_ms: 42,
        },
      ],
    };
    renderConsole("/console/activity", {
      session: VIEWER,
      routes: { "GET /v1/audit/activity": activity, "GET /v1/audit/timeline": timeline },
    });
    fireEvent.click(await screen.findByRole("button", { name: "s1" }));
    const call = (await screen.findByText("memory_write_page")).closest("li") as HTMLElement;
    expect(call.textContent).toMatch(/Tool call memory_write_page · FAILED · 42 ms/);
    expect(call.textContent).toContain("by laptop");
    expect(screen.getByText("session_start")).toBeTruthy();
    expect(screen.queryByText(/No events recorded/)).toBeNull();
  });
});
