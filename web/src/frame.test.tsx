// @vitest-environment happy-dom
// The signed-in frame around every view: the theme choice, the idle sign-out warning that keeps drafts, and focus
// moving to the new view's heading.
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConsoleApp } from "./app.js";
import { createFakeGateway, type FakeGateway, type FakeGatewayOptions, json } from "./test-support.js";
import { THEME_KEY } from "./theme.js";

let gateway: FakeGateway;
/** The idle end GET /v1/console/session answers with (the fake's session is otherwise fixed). */
let idleEnd = "2099-01-01T00:00:00.000Z";

const ROUTES = {
  "GET /v1/admin/overview": () => json(503, { error: "unavailable", message: "Not in this test." }),
  "GET /v1/admin/connectors": { connectors: [] },
  "GET /v1/memory/pages": { pages: [], next_cursor: null },
};

function start(url: string, options: FakeGatewayOptions = {}) {
  gateway = createFakeGateway({ routes: ROUTES, ...options });
  const inner = gateway.fetch;
  vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await inner(input, init);
    const isSession = String(input) === "/v1/console/session" && (init?.method ?? "GET") !== "DELETE";
    if (!isSession || !response.ok) return response;
    return json(200, { ...((await response.json()) as object), idle_expires_at: idleEnd });
  });
  window.history.replaceState(null, "", url);
  return render(<ConsoleApp />);
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.localStorage.clear();
  window.sessionStorage.clear();
  document.documentElement.removeAttribute("data-theme");
  idleEnd = "2099-01-01T00:00:00.000Z";
});

describe("theme", () => {
  it("applies the chosen theme to <html> and remembers it for the next visit; System follows the OS", async () => {
    start("/console/knowledge");
    const select = (await screen.findByLabelText("Theme")) as HTMLSelectElement;
    expect(select.value).toBe("system");
    expect(document.documentElement.hasAttribute("data-theme")).toBe(false);
    fireEvent.change(select, { target: { value: "dark" } });
    expect(document.documentElement.getAttribute("data-theme")).toBe("dark");
    expect(window.localStorage.getItem(THEME_KEY)).toBe("dark");

    cleanup();
    start("/console/knowledge");
    expect(((await screen.findByLabelText("Theme")) as HTMLSelectElement).value).toBe("dark");
    fireEvent.change(screen.getByLabelText("Theme"), { target: { value: "system" } });
    expect(document.documentElement.hasAttribute("data-theme")).toBe(false);
    expect(window.localStorage.getItem(THEME_KEY)).toBeNull();
  });
});

describe("idle sign-out", () => {
  it("warns before the idle end; Stay signed in asks the server again and the warning goes", async () => {
    idleEnd = new Date(Date.now() + 30_000).toISOString();
    start("/console/knowledge");
    const dialog = await screen.findByRole("alertdialog", { name: "Still there?" });
    expect(dialog.textContent).toMatch(/signed out for inactivity in \d+ s/);
    const stay = screen.getByRole("button", { name: "Stay signed in" });
    await waitFor(() => expect(document.activeElement).toBe(stay));

    idleEnd = new Date(Date.now() + 30 * 60_000).toISOString();
    const before = gateway.requests.length;
    fireEvent.click(stay);
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    const asked = gateway.requests.slice(before).find((r) => r.path === "/v1/console/session");
    expect(asked?.headers["x-ivoai-idle"]).toBe("0");
  });

  it("keeps a half-typed field through the sign-out and the next sign-in", async () => {
    idleEnd = new Date(Date.now() + 30_000).toISOString();
    start("/console/knowledge");
    const input = (await screen.findByLabelText("Search documents")) as HTMLInputElement;
    fireEvent.change(input, { target: { value: "half-typed question" } });
    await screen.findByRole("alertdialog", { name: "Still there?" });

    // The server ended the session: the next check says so and the app shows sign-in.
    gateway.expire();
    fireEvent.click(screen.getByRole("button", { name: "Stay signed in" }));
    expect(await screen.findByText("Your session ended. Sign in again to continue.")).toBeTruthy();
    expect(screen.queryByLabelText("Search documents")).toBeNull();

    idleEnd = "2099-01-01T00:00:00.000Z";
    fireEvent.change(screen.getByLabelText("Sign-in code"), { target: { value: gateway.code } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    const restored = (await screen.findByLabelText("Search documents")) as HTMLInputElement;
    expect(restored.value).toBe("half-typed question");
  });

  it("forgets drafts on a deliberate sign-out", async () => {
    start("/console/knowledge");
    fireEvent.change(await screen.findByLabelText("Search documents"), { target: { value: "secret" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign out" }));
    expect(await screen.findByText("You signed out.")).toBeTruthy();
    expect(window.sessionStorage.length).toBe(0);
  });
});

describe("view change", () => {
  it("moves focus to the new view's h1, but not on first load", async () => {
    start("/console/knowledge");
    expect(await screen.findByRole("heading", { level: 1, name: "Knowledge" })).toBeTruthy();
    expect(document.activeElement).toBe(document.body);
    fireEvent.click(screen.getByRole("link", { name: "Overview" }));
    const heading = await screen.findByRole("heading", { level: 1, name: "Overview" });
    await waitFor(() => expect(document.activeElement).toBe(heading));
  });
});
