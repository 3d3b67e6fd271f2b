// @vitest-environment happy-dom
// The console against a fake gateway: sign-in, the approvals queue and details, deciding, and session expiry.
import { focusManager } from "@tanstack/react-query";
import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { approval, fakeLayout, json, renderConsole } from "./test-support.js";
import type { ApprovalChanges } from "./types.js";

let restoreLayout: () => void;

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
  await screen.findByRole("heading", { level: 2, name: new RegExp(escapeRegExp(target)) });
  return screen.getByRole("region", { name: "Approval details" });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("approvals", () => {
  it("renders the first page's rows, only the visible ones in the DOM", async () => {
    const { gateway } = renderConsole("/console/approvals", {
      approvals: Array.from({ length: 450 }, (_, i) => approval(i)),
    });
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
    const { gateway } = renderConsole("/console/approvals", {
      approvals: Array.from({ length: 230 }, (_, i) => approval(i)),
    });
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
    const { container } = renderConsole("/console/approvals", { approvals: [hostile] });
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
    renderConsole("/console/approvals", { approvals: [hostile] });
    const list = await openList();
    const details = await openRow(list);
    expect(await within(details).findByText("Create notes/\\u202egpj.exe\\x1b[2J")).toBeTruthy();
    expect(within(details).getByText("+ \\u2066hidden\\u2069 two")).toBeTruthy();
    expect(within(details).getByText("+ line one")).toBeTruthy();
    const shown = document.body.textContent ?? "";
    expect(["\u202e", "\u2066", "\u001b"].filter((char) => shown.includes(char))).toEqual([]);
  });

  it("approves with the CSRF token and explains the outcome", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1), approval(2)] });
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
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
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

  it("keeps a half-typed reason when the console goes away (an idle sign-out) and drops it once used", async () => {
    renderConsole("/console/approvals/apr_00001", { approvals: [approval(1)] });
    let details = await screen.findByRole("region", { name: "Approval details" });
    fireEvent.change(await within(details).findByLabelText("Reason"), { target: { value: "Half a tho" } });
    cleanup();
    const { gateway } = renderConsole("/console/approvals/apr_00001", { approvals: [approval(1)] });
    details = await screen.findByRole("region", { name: "Approval details" });
    const reason = (await within(details).findByLabelText("Reason")) as HTMLTextAreaElement;
    expect(reason.value).toBe("Half a tho");
    fireEvent.click(within(details).getByRole("button", { name: "Reject" }));
    expect((await within(details).findByRole("status")).textContent).toContain("Rejected");
    expect(gateway.requests.find((request) => request.method === "POST")?.body).toEqual({
      reason: "Half a tho",
    });
    expect(Object.keys(sessionStorage).filter((key) => key.includes("approval-reason"))).toEqual([]);
  });

  it("shows only the error, no counts or refresh rate, while the server does not answer", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
    const answer = gateway.fetch;
    vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) =>
      new URL(String(input), "http://console.test").pathname.startsWith("/v1/approvals")
        ? Promise.resolve(json(503, { error: "unavailable", message: "The gateway is down." }))
        : answer(input, init),
    );
    expect((await screen.findByRole("alert")).textContent).toContain("The gateway is down.");
    expect(screen.queryByText(/updates every/)).toBeNull();
    expect(screen.queryByText(/\d+ pending/)).toBeNull();
  });

  it("explains a conflict answered with 409", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
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
    renderConsole("/console/approvals", { approvals: [approval(1), approval(2), approval(3)] });
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
    renderConsole("/console/approvals", {
      approvals: [approval(1)],
      session: { role: "viewer", scopes: ["approvals:read"] },
    });
    const list = await openList();
    const details = await openRow(list);
    await within(details).findByText(/cannot approve or reject/);
    expect(within(details).queryByRole("button", { name: "Approve" })).toBeNull();
  });
});

const EXPIRES = "2026-12-03T15:02:00.000Z";

/** A request touching every field the gateway describes (no real request does all of it at once). */
const EVERY_ITEM: ApprovalChanges = {
  effect: "replace",
  headline: "Replaces team:notes/page-1.md — metadata only: expiry, title, tags, relations",
  metadata_only: true,
  items: [
    { field: "title", severity: "change", text: "Title: “Old” → “New”", before: "Old", after: "New" },
    {
      field: "expires_at",
      severity: "danger",
      text: `This page will be deleted on ${EXPIRES}`,
      change: "set",
      before: null,
      after: EXPIRES,
    },
    {
      field: "conflict",
      severity: "warning",
      text: "The page changed since the request (version 2 → 3)",
      base_version: 2,
      current_version: 3,
    },
    {
      field: "tags",
      severity: "change",
      text: "Tags: +urgent −stale",
      added: ["urgent"],
      removed: ["stale"],
    },
    {
      field: "relations",
      severity: "change",
      text: "Relations: +depends_on notes/a −see_also notes/b",
      added: [{ type: "depends_on", target: "notes/a" }],
      removed: [{ type: "see_also", target: "notes/b" }],
    },
    {
      field: "location",
      severity: "info",
      text: "Page team:notes/page-1.md",
      scope: "team",
      path: "notes/page-1.md",
    },
  ],
  body: {
    added: 0,
    removed: 0,
    lines: [
      { op: "=", old: 1, new: 1, text: "same line one" },
      { op: "=", old: 2, new: 2, text: "same line two" },
    ],
    coarse: false,
  },
};

describe("approvals for daily use", () => {
  it("keeps the keyboard on the same request when new ones arrive at the top", async () => {
    const { gateway } = renderConsole("/console/approvals", {
      approvals: [approval(1), approval(2), approval(3)],
    });
    const list = await openList();
    act(() => list.focus());
    fireEvent.keyDown(list, { key: "ArrowDown" });
    expect(list.getAttribute("aria-activedescendant")).toBe("approval-apr_00002");
    gateway.approvals.unshift(approval(90), approval(91));
    // The pending list polls: the new requests appear above without a reload.
    await waitFor(() => expect(within(list).getAllByRole("option")).toHaveLength(5), { timeout: 8000 });
    expect(within(list).getAllByRole("option")[0]?.id).toBe("approval-apr_00090");
    expect(list.getAttribute("aria-activedescendant")).toBe("approval-apr_00002");
    fireEvent.keyDown(list, { key: "Enter" });
    await screen.findByRole("heading", { level: 2, name: /notes\/page-2\.md/ });
  });

  it("goes back to the list with the back button, focus on the list", async () => {
    renderConsole("/console/approvals", { approvals: [approval(1), approval(2)] });
    const list = await openList();
    const heading = within(await openRow(list, 1)).getByRole("heading", { level: 2 });
    await waitFor(() => expect(document.activeElement).toBe(heading));
    expect(window.location.pathname).toBe("/console/approvals/apr_00002");
    act(() => window.history.back());
    await screen.findByText("Select a request to see its details.");
    expect(window.location.pathname).toBe("/console/approvals");
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole("listbox")));
    expect(screen.getByRole("listbox").getAttribute("aria-activedescendant")).toBe("approval-apr_00002");
  });

  it("shows no row as selected before one is opened or the list has focus", async () => {
    renderConsole("/console/approvals", { approvals: [approval(1), approval(2)] });
    const list = await openList();
    expect(list.querySelectorAll('[aria-selected="true"], .active, .open')).toHaveLength(0);
  });

  it("shows requesters by name with the id beside it, in the list and the details", async () => {
    renderConsole("/console/approvals", { approvals: [approval(1)], names: { "agent-1": "Bea's laptop" } });
    const list = await openList();
    const row = within(list).getAllByRole("option")[0] as HTMLElement;
    expect(row.textContent).toContain("by Bea's laptop");
    expect(row.textContent).toContain("agent-1");
    const details = await openRow(list);
    expect(within(details).getByText(/Bea's laptop/).textContent).toContain("(agent-1)");
  });

  it("sends the filters as query params, keeps them in the URL and says what is filtered", async () => {
    const old = new Date(Date.now() - 2 * 86_400_000).toISOString();
    const { gateway } = renderConsole("/console/approvals", {
      approvals: [
        approval(1, { requester: "cli_bea", created_at: old }),
        approval(2, { requester: "cli_bea" }),
        approval(3, { tool: "memory_delete_page", action: "delete_page" }),
      ],
      names: { cli_bea: "Bea" },
    });
    const list = await openList();
    expect(within(list).getAllByRole("option")).toHaveLength(3);
    fireEvent.change(screen.getByLabelText("Requester"), { target: { value: "Bea" } });
    await waitFor(() => expect(window.location.search).toContain("requester=Bea"));
    fireEvent.change(screen.getByLabelText("Older than"), { target: { value: "1d" } });
    await waitFor(() => expect(within(screen.getByRole("listbox")).getAllByRole("option")).toHaveLength(1));
    const last = gateway.requests.filter((request) => request.path.startsWith("/v1/approvals?")).at(-1);
    const params = new URL(last?.path ?? "", "http://x").searchParams;
    expect(params.get("requester")).toBe("Bea");
    expect(params.get("status")).toBe("pending");
    expect(Date.parse(params.get("before") ?? "")).toBeLessThan(Date.now() - 86_000_000);
    expect(window.location.search).toContain("age=1d");
    expect(
      screen.getByText(/1 pending matching requester “Bea”, older than 1 day \(of 3 pending\)/),
    ).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Tool"), { target: { value: "memory_delete_page" } });
    await screen.findByText(/No pending requests matching requester “Bea”, tool memory_delete_page/);
  });

  it("opens a request from its URL, also one past the first page and one already decided", async () => {
    const many = Array.from({ length: 450 }, (_, i) => approval(i));
    many.push(approval(999, { status: "applied", decided_by: "Bob", decided_at: new Date().toISOString() }));
    renderConsole("/console/approvals/apr_00400", { approvals: many });
    await screen.findByRole("heading", { level: 2, name: /notes\/page-400\.md/ });
    cleanup();
    renderConsole("/console/approvals/apr_00999", { approvals: many });
    const heading = await screen.findByRole("heading", { level: 2, name: /notes\/page-999\.md/ });
    await waitFor(() => expect(document.activeElement).toBe(heading));
    const details = screen.getByRole("region", { name: "Approval details" });
    expect(within(details).getByText("applied")).toBeTruthy();
    expect(within(details).getByText(/Bob/)).toBeTruthy();
  });

  it("renders every item of the change description, the deletion first, and says metadata only", async () => {
    renderConsole("/console/approvals", { approvals: [approval(1)], changes: { apr_00001: EVERY_ITEM } });
    const details = await openRow(await openList());
    const text = details.textContent ?? "";
    expect(text).toContain(EVERY_ITEM.headline);
    for (const item of EVERY_ITEM.items) expect(text).toContain(item.text);
    // Loudest first: the deletion before the conflict before the rest.
    const order = ["will be deleted on", "changed since the request", "Title: “Old”", "Tags:", "Page team:"];
    const at = order.map((part) => text.indexOf(part));
    expect(at).toEqual([...at].sort((a, b) => a - b));
    const danger = within(details).getByRole("note", { name: "Approving deletes a page" });
    expect(danger.textContent).toContain(`This page will be deleted on ${EXPIRES}`);
    expect(danger.querySelector(`time[datetime="${EXPIRES}"]`)).not.toBeNull();
    expect(text).toMatch(/Metadata only:.*body does not change/);
    expect(text).not.toMatch(/no changes/i);
    // Tags and relations added and removed, the title before and after.
    expect(details.querySelector("ins.ap-chip-add")?.textContent).toBe("+urgent");
    expect(details.querySelector("del.ap-chip-del")?.textContent).toBe("−stale");
    expect(text).toContain("depends_on → notes/a");
    expect(text).toContain("see_also → notes/b");
    expect(details.querySelector(".ap-before-after del")?.textContent).toBe("Old");
    expect(details.querySelector(".ap-before-after ins")?.textContent).toBe("New");
    // The unchanged body is still there to read.
    expect(text).toContain("same line two");
  });

  it("numbers both sides, counts the change and marks the changed words; the layout choice is kept", async () => {
    window.localStorage.clear();
    const diff = "--- a\n+++ b\n@@\n keep\n-the quick brown fox\n+the quick red fox\n+one more";
    renderConsole("/console/approvals", { approvals: [approval(1, { diff })] });
    const details = await openRow(await openList());
    const box = within(details).getByRole("region", { name: "Body of team:notes/page-1.md" });
    expect(box.getAttribute("tabindex")).toBe("0");
    expect(details.textContent).toContain("2 lines added, 1 removed");
    const lines = [...box.querySelectorAll(".ap-dl")].map((line) =>
      [...line.children].map((cell) => cell.textContent),
    );
    expect(lines).toEqual([
      ["1", "1", "  keep"],
      ["2", "", "- the quick brown fox"],
      ["", "2", "+ the quick red fox"],
      ["", "3", "+ one more"],
    ]);
    expect([...box.querySelectorAll("mark")].map((mark) => mark.textContent)).toEqual(["brown", "red"]);
    fireEvent.click(within(details).getByRole("button", { name: "Split" }));
    expect(window.localStorage.getItem("ivoai.console.diff-layout")).toBe("split");
    const split = within(details).getByRole("region", { name: "Body of team:notes/page-1.md" });
    const rows = [...split.querySelectorAll(".ap-split-row")].map((row) => row.textContent);
    expect(rows).toEqual(["1  keep1  keep", "2- the quick brown fox2+ the quick red fox", "3+ one more"]);
    expect(within(details).getByRole("button", { name: "Split" }).getAttribute("aria-pressed")).toBe("true");
  });

  it("renders every line of a large body", async () => {
    const body = Array.from({ length: 3000 }, (_, i) => `+line ${i}`).join("\n");
    renderConsole("/console/approvals", { approvals: [approval(1, { diff: body })] });
    const details = await openRow(await openList());
    await waitFor(() => expect(details.querySelectorAll(".ap-dl")).toHaveLength(3000), { timeout: 10_000 });
    expect(details.querySelector(".ap-dl:last-child")?.textContent).toContain("line 2999");
  });

  it("shows a decision someone else made while the request is open", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
    const details = await openRow(await openList());
    const record = gateway.approvals[0];
    if (!record) throw new Error("no record");
    Object.assign(record, { status: "rejected", decided_by: "Bob", decided_at: new Date().toISOString() });
    const notice = await within(details).findByText(/Decided while you were looking/, {}, { timeout: 8000 });
    expect(notice.closest("[role=status]")?.textContent).toContain("rejected by Bob");
    expect(within(details).queryByRole("button", { name: "Approve" })).toBeNull();
  });
});

describe("bulk decisions", () => {
  const three = () => [
    approval(1),
    approval(2, { tool: "memory_delete_page", action: "delete_page" }),
    approval(3),
    approval(4),
  ];

  it("approves the checked requests once each, after a confirmation that says how many and what", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: three() });
    const list = await openList();
    act(() => list.focus());
    fireEvent.keyDown(list, { key: " " });
    fireEvent.keyDown(list, { key: "ArrowDown" });
    fireEvent.keyDown(list, { key: " " });
    fireEvent.keyDown(list, { key: "ArrowDown" });
    fireEvent.keyDown(list, { key: " " });
    const options = within(list).getAllByRole("option");
    expect(options.map((option) => option.getAttribute("aria-checked"))).toEqual([
      "true",
      "true",
      "true",
      "false",
    ]);
    const opener = screen.getByRole("button", { name: "Approve 3" });
    fireEvent.click(opener);
    const dialog = screen.getByRole("dialog");
    expect(dialog.textContent).toContain("Approve 3 requests: 1 deletes a page, 2 write pages");
    expect(dialog.contains(document.activeElement)).toBe(true);
    const confirm = within(dialog).getByRole("button", { name: "Approve 3" });
    fireEvent.click(confirm);
    fireEvent.click(confirm);
    const results = await screen.findByRole("heading", { level: 2, name: /Bulk approval: 3 applied/ });
    await waitFor(() => expect(document.activeElement).toBe(results));
    const posts = gateway.requests.filter((request) => request.method === "POST");
    expect(posts).toHaveLength(1);
    expect(posts[0]?.path).toBe("/v1/approvals/decide");
    expect(posts[0]?.headers["x-csrf-token"]).toBe("csrf-test-token");
    expect(posts[0]?.body).toEqual({ ids: ["apr_00001", "apr_00002", "apr_00003"], approve: true });
    expect(gateway.decisions.map((decision) => decision.id)).toEqual(["apr_00001", "apr_00002", "apr_00003"]);
    expect(screen.queryByRole("dialog")).toBeNull();
    await waitFor(() => expect(within(list).getAllByRole("option")).toHaveLength(1));
  });

  it("rejects all shown with a reason, and Escape cancels with focus back on the button", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: three() });
    await openList();
    fireEvent.click(screen.getByLabelText("Check all 4 shown"));
    const opener = screen.getByRole("button", { name: "Reject 4" });
    fireEvent.click(opener);
    let dialog = screen.getByRole("dialog");
    expect(dialog.textContent).toContain("Reject 4 requests: 1 deletes a page, 3 write pages");
    expect(document.activeElement).toBe(within(dialog).getByLabelText("Reason"));
    fireEvent.keyDown(dialog, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(document.activeElement).toBe(opener);
    fireEvent.click(opener);
    dialog = screen.getByRole("dialog");
    fireEvent.click(within(dialog).getByRole("button", { name: "Reject 4" }));
    expect(within(dialog).getByRole("alert").textContent).toContain("A reason is required");
    fireEvent.change(within(dialog).getByLabelText("Reason"), { target: { value: "Not now" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Reject 4" }));
    await screen.findByRole("heading", { level: 2, name: /Bulk rejection: 4 rejected/ });
    const post = gateway.requests.find((request) => request.method === "POST");
    expect(post?.body).toMatchObject({ approve: false, reason: "Not now" });
    expect(gateway.approvals.every((record) => record.status === "rejected")).toBe(true);
  });

  it("splits a decision over more than 200 requests into batches of 200, each id sent once", async () => {
    const { gateway } = renderConsole("/console/approvals", {
      approvals: Array.from({ length: 250 }, (_, i) => approval(i)),
    });
    const list = await openList();
    act(() => list.focus());
    fireEvent.keyDown(list, { key: "End" });
    await screen.findByLabelText("Check all 250 shown");
    fireEvent.click(screen.getByLabelText("Check all 250 shown"));
    fireEvent.click(screen.getByRole("button", { name: "Approve 250" }));
    expect(screen.getByRole("dialog").textContent).toContain("Approve 250 requests: 250 write pages");
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Approve 250" }));
    await screen.findByRole("heading", { level: 2, name: /Bulk approval: 250 applied/ });
    const posts = gateway.requests.filter((request) => request.method === "POST");
    expect(posts.map((post) => (post.body as { ids: string[] }).ids.length)).toEqual([200, 50]);
    const sent = posts.flatMap((post) => (post.body as { ids: string[] }).ids);
    expect(new Set(sent).size).toBe(250);
    expect(gateway.decisions).toHaveLength(250);
  });

  it("shows each request's outcome when some were decided already", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: three() });
    const list = await openList();
    fireEvent.click(screen.getByLabelText("Check all 4 shown"));
    // Someone else decides one while the confirmation is open.
    fireEvent.click(screen.getByRole("button", { name: "Approve 4" }));
    const record = gateway.approvals[1];
    if (record) record.status = "rejected";
    fireEvent.click(within(screen.getByRole("dialog")).getByRole("button", { name: "Approve 4" }));
    await screen.findByRole("heading", { level: 2, name: /3 applied, 1 already decided/ });
    expect(
      screen.getByText(/team:notes\/page-2\.md/, { selector: "span" }).parentElement?.textContent,
    ).toContain("already decided by someone else");
    expect(list).toBeTruthy();
  });
});

describe("session", () => {
  it("signs in from a #code fragment and drops the fragment", async () => {
    const { gateway } = renderConsole("/console/#code=ivoai_con_testcode", { signedIn: false });
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
    renderConsole("/console/", { signedIn: false });
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
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
    const list = await openList();
    act(() => gateway.expire("session_expired"));
    fireEvent.click(within(list).getAllByRole("option")[0] as HTMLElement);
    expect(await screen.findByLabelText("Sign-in code")).toBeTruthy();
    expect(screen.getByRole("status").textContent).toContain("Your session ended");
    expect(screen.queryByRole("listbox")).toBeNull();
  });

  it("keeps the session-ended notice when several requests in flight come back 401", async () => {
    const { gateway } = renderConsole("/console/approvals", { approvals: [approval(1)] });
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
    const { gateway } = renderConsole("/console/approvals", { approvals: [] });
    fireEvent.click(await screen.findByRole("button", { name: "Sign out" }));
    expect(await screen.findByLabelText("Sign-in code")).toBeTruthy();
    const del = gateway.requests.find((request) => request.method === "DELETE");
    expect(del?.headers["x-csrf-token"]).toBe("csrf-test-token");
  });
});
