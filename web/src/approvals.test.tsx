// @vitest-environment happy-dom
// The console against a fake gateway: sign-in, the approvals queue and details, deciding, and session expiry.
import { focusManager } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConsoleApp } from "./app.js";
import { approval, createFakeGateway, type FakeGateway, fakeLayout } from "./test-support.js";

let gateway: FakeGateway;
let restoreLayout: () => void;

function start(url: string, setup: Parameters<typeof createFakeGateway>[0] = {}) {
  gateway = createFakeGateway(setup);
  vi.stubGlobal("fetch", gateway.fetch);
  window.history.replaceState(null, "", url);
  return render(<ConsoleApp />);
}

beforeEach(() => {
  restoreLayout = fakeLayout();
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  restoreLayout();
});

async function openList() {
  return await screen.findByRole("listbox", { name: "Approval requests" });
}

/** Clicks a row and waits for its details (the heading names the request's path). */
async function openRow(list: HTMLElement, index = 0) {
  const row = within(list).getAllByRole("option")[index] as HTMLElement;
  const target = row.querySelector(".target")?.textContent ?? "";
  fireEvent.click(row);
  await screen.findByRole("heading", { level: 2, name: new RegExp(escape(target)) });
  return screen.getByRole("region", { name: "Approval details" });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("approvals", () => {
  it("renders the first page's rows, only the visible ones in the DOM", async () => {
    start("/console/approvals", { approvals: Array.from({ length: 450 }, (_, i) => approval(i)) });
    const list = await openList();
    const options = within(list).getAllByRole("option");
    expect(options.length).toBeGreaterThan(5);
    expect(options.length).toBeLessThan(40);
    expect(options[0]?.textContent).toContain("team:notes/page-0.md");
    expect(options[0]?.textContent).toContain("Write page 0");
    expect(options[0]?.textContent).toContain("agent-0");
    expect(options[0]?.getAttribute("aria-setsize")).toBe("200");
    expect(await screen.findByText(/450 pending/)).toBeTruthy();
    const listCalls = gateway.requests.filter((request) => request.path.startsWith("/v1/approvals?"));
    expect(listCalls[0]?.path).toBe("/v1/approvals?status=pending&limit=200");
  });

  it("loads the next cursor page when the end of the list is reached", async () => {
    start("/console/approvals", { approvals: Array.from({ length: 230 }, (_, i) => approval(i)) });
    const list = await openList();
    list.focus();
    fireEvent.keyDown(list, { key: "End" });
    await waitFor(() => expect(gateway.requests.some((r) => r.path.includes("cursor=200"))).toBe(true));
    await waitFor(() =>
      expect(within(list).getAllByRole("option")[0]?.getAttribute("aria-setsize")).toBe("230"),
    );
  });

  it("renders agent-written markup in a diff as inert text", async () => {
    const hostile = approval(1, {
      summary: "<img src=x onerror=alert(1)>",
      diff: '--- a/x\n+++ b/x\n@@ -0,0 +1,2 @@\n+<script>window.pwned = 1</script>\n+<img src=x onerror="window.pwned = 2">',
    });
    const { container } = start("/console/approvals", { approvals: [hostile] });
    const list = await openList();
    const details = await openRow(list);
    await within(details).findByText("+ <script>window.pwned = 1</script>");
    expect(within(details).getByText('+ <img src=x onerror="window.pwned = 2">').className).toContain(
      "ap-add",
    );
    expect(container.querySelector("script")).toBeNull();
    expect(container.querySelector("img")).toBeNull();
    expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
  });

  it("shows control characters and bidi overrides in agent text as visible escapes", async () => {
    const hostile = approval(1, {
      path: "notes/invoice",
      summary: "Create notes/\u202egpj.exe\u001b[2J",
      diff: "+ line one\n+\u2066hidden\u2069 two",
    });
    start("/console/approvals", { approvals: [hostile] });
    const list = await openList();
    const details = await openRow(list);
    expect(await within(details).findByText("Create notes/\\u202egpj.exe\\x1b[2J")).toBeTruthy();
    expect(within(details).getByText("+ \\u2066hidden\\u2069 two")).toBeTruthy();
    expect(within(details).getByText("+ line one")).toBeTruthy();
    const shown = document.body.textContent ?? "";
    expect(["\u202e", "\u2066", "\u001b"].filter((char) => shown.includes(char))).toEqual([]);
  });

  it("approves with the CSRF token and explains the outcome", async () => {
    start("/console/approvals", { approvals: [approval(1), approval(2)] });
    const list = await openList();
    const details = await openRow(list);
    fireEvent.click(await within(details).findByRole("button", { name: "Approve" }));
    const outcome = await within(details).findByRole("status");
    expect(outcome.textContent).toContain("Applied");
    expect(outcome.textContent).toContain("Agents see it now");
    expect(document.activeElement).toBe(outcome);
    // The details now show the decided record.
    await waitFor(() => expect(within(details).getByText("applied")).toBeTruthy());
    expect(within(details).queryByRole("button", { name: "Approve" })).toBeNull();
    const post = gateway.requests.find((request) => request.method === "POST");
    expect(post?.path).toBe("/v1/approvals/apr_00001/approve");
    expect(post?.headers["x-csrf-token"]).toBe("csrf-test-token");
    expect(gateway.approvals[0]?.status).toBe("applied");
    // The queue refreshes: the decided request leaves the pending list.
    await waitFor(() => expect(within(list).getAllByRole("option")).toHaveLength(1));
  });

  it("refuses to reject without a reason, then sends the reason", async () => {
    start("/console/approvals", { approvals: [approval(1)] });
    const list = await openList();
    const details = await openRow(list);
    fireEvent.click(await within(details).findByRole("button", { name: "Reject" }));
    expect(within(details).getByRole("alert").textContent).toContain("A reason is required");
    expect(gateway.requests.some((request) => request.method === "POST")).toBe(false);
    fireEvent.change(within(details).getByLabelText("Reason"), { target: { value: "Wrong team" } });
    fireEvent.click(within(details).getByRole("button", { name: "Reject" }));
    expect((await within(details).findByRole("status")).textContent).toContain("Rejected");
    const post = gateway.requests.find((request) => request.method === "POST");
    expect(post?.path).toBe("/v1/approvals/apr_00001/reject");
    expect(post?.body).toEqual({ reason: "Wrong team" });
  });

  it("explains a conflict answered with 409", async () => {
    start("/console/approvals", { approvals: [approval(1)] });
    const list = await openList();
    const details = await openRow(list);
    const approve = await within(details).findByRole("button", { name: "Approve" });
    const original = gateway.fetch;
    vi.stubGlobal("fetch", async (input: RequestInfo | URL, init?: RequestInit) => {
      if (init?.method === "POST") {
        return new Response(
          JSON.stringify({
            outcome: "conflict",
            approval: approval(1, { status: "conflict" }),
            message: "changed",
          }),
          { status: 409, headers: { "content-type": "application/json" } },
        );
      }
      return original(input, init);
    });
    fireEvent.click(approve);
    const outcome = await within(details).findByRole("status");
    expect(outcome.textContent).toContain("Conflict");
    expect(outcome.textContent).toContain("must propose the change again");
  });

  it("moves the selection with ArrowDown and opens it with Enter, focusing the details", async () => {
    start("/console/approvals", { approvals: [approval(1), approval(2), approval(3)] });
    const list = await openList();
    // Nothing is highlighted until the list has focus; focus lands on the first request.
    expect(list.getAttribute("aria-activedescendant")).toBeNull();
    expect(list.querySelector(".active")).toBeNull();
    act(() => list.focus());
    expect(list.getAttribute("aria-activedescendant")).toBe("approval-apr_00001");
    fireEvent.keyDown(list, { key: "ArrowDown" });
    expect(list.getAttribute("aria-activedescendant")).toBe("approval-apr_00002");
    fireEvent.keyDown(list, { key: "Enter" });
    const heading = await screen.findByRole("heading", { level: 2, name: /team:notes\/page-2\.md/ });
    // The request has its own URL (a link to paste in chat).
    expect(window.location.pathname).toBe("/console/approvals/apr_00002");
    await waitFor(() => expect(document.activeElement).toBe(heading));
    expect(within(list).getAllByRole("option")[1]?.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(list, { key: "k" });
    expect(list.getAttribute("aria-activedescendant")).toBe("approval-apr_00001");
  });

  it("hides the decision for a role without approvals:decide", async () => {
    start("/console/approvals", {
      approvals: [approval(1)],
      session: { role: "viewer", scopes: ["approvals:read"] },
    });
    const list = await openList();
    const details = await openRow(list);
    await within(details).findByText(/cannot approve or reject/);
    expect(within(details).queryByRole("button", { name: "Approve" })).toBeNull();
  });
});

describe("session", () => {
  it("signs in from a #code fragment and drops the fragment", async () => {
    start("/console/#code=ivoai_con_testcode", { signedIn: false });
    expect(window.location.hash).toBe("");
    expect(await screen.findByRole("heading", { level: 1, name: "Overview" })).toBeTruthy();
    const post = gateway.requests.find((request) => request.method === "POST");
    expect(post?.path).toBe("/v1/console/session");
    expect(post?.body).toEqual({ code: "ivoai_con_testcode" });
    expect(window.location.href).not.toContain("ivoai_con_testcode");
    const banner = screen.getByRole("banner");
    expect(banner.textContent).toContain("Ana");
    expect(banner.textContent).toContain("approver");
  });

  it("signs in with a typed code, and shows a refused code in an alert", async () => {
    start("/console/", { signedIn: false });
    const input = await screen.findByLabelText("Sign-in code");
    fireEvent.change(input, { target: { value: "ivoai_con_wrong" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect((await screen.findByRole("alert")).textContent).toContain("did not work");
    fireEvent.change(screen.getByLabelText("Sign-in code"), { target: { value: "ivoai_con_testcode" } });
    fireEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(await screen.findByRole("navigation", { name: "Main" })).toBeTruthy();
    for (const name of ["Overview", "Approvals", "Activity", "Knowledge", "Clients"]) {
      expect(screen.getByRole("link", { name })).toBeTruthy();
    }
  });

  it("returns to sign-in with a notice when the session expired", async () => {
    start("/console/approvals", { approvals: [approval(1)] });
    const list = await openList();
    act(() => gateway.expire("session_expired"));
    fireEvent.click(within(list).getAllByRole("option")[0] as HTMLElement);
    expect(await screen.findByLabelText("Sign-in code")).toBeTruthy();
    expect(screen.getByRole("status").textContent).toContain("Your session ended");
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("keeps the session-ended notice when several requests in flight come back 401", async () => {
    start("/console/approvals", { approvals: [approval(1)] });
    await openList();
    const before = gateway.requests.length;
    act(() => gateway.expire("session_expired"));
    // Focus refetches the counts and the list together: one gets session_expired, the next a plain 401.
    act(() => {
      focusManager.setFocused(false);
      focusManager.setFocused(true);
    });
    expect(await screen.findByLabelText("Sign-in code")).toBeTruthy();
    await waitFor(() => expect(gateway.requests.length - before).toBeGreaterThanOrEqual(2));
    expect(screen.getByRole("status").textContent).toContain("Your session ended");
    focusManager.setFocused(undefined);
  });

  it("signs out with the CSRF token", async () => {
    start("/console/approvals", { approvals: [] });
    fireEvent.click(await screen.findByRole("button", { name: "Sign out" }));
    expect(await screen.findByLabelText("Sign-in code")).toBeTruthy();
    const del = gateway.requests.find((request) => request.method === "DELETE");
    expect(del?.headers["x-csrf-token"]).toBe("csrf-test-token");
  });
});
