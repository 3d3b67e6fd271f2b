// The web console in real headless Chromium against the built server: a person signs in with a code, works the
// approval queue while an agent writes through MCP, reads activity, knowledge and clients, revokes a client —
// and nothing an agent wrote can run script. axe-core checks every view.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, seriousViolations } from "./browser.js";
import { consoleLogin, initTinyServer, setIdleTimeout } from "./console-helpers.js";
import {
  connectMcp,
  createCode,
  enrolledCredential,
  initWithDocs,
  type RunningServer,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = { status: string; data: Record<string, unknown> };

/** The text of the focused element, in the page. */
const FOCUSED_TEXT = "document.activeElement?.textContent?.trim() ?? null";

const SCRIPT_TITLE = `<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">`;

describe("web console in Chromium", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let agent: Client;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Tool calls this test made through MCP: the activity view must count exactly these. */
  let toolCalls = 0;
  const violations: Record<string, unknown[]> = {};

  const call = async (name: string, args: Record<string, unknown>): Promise<Envelope> => {
    toolCalls++;
    return (await agent.callTool({ name, arguments: args })).structuredContent as Envelope;
  };
  const nav = (name: string) => page.getByRole("navigation", { name: "Main" }).getByRole("link", { name });
  const audit = async (view: string) => {
    violations[view] = await seriousViolations(page);
  };
  const requests = () => page.getByRole("listbox", { name: "Approval requests" });

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-console-ui-"));
    const docs = path.join(root, "docs");
    await mkdir(docs, { recursive: true });
    await writeFile(
      path.join(docs, "billing.md"),
      "# Billing retries\n\nThe billing queue retries a message five times before it parks it.\n",
    );
    await initWithDocs(path.join(root, "server"), docs);
    server = await startServer(path.join(root, "server"));
    agent = await connectMcp(
      `${server.url}/v1/memory/mcp`,
      await enrolledCredential(server.url, path.join(root, "server")),
      { "x-ivoai-session-id": "sess-console", "x-ivoai-project": "git:acme/api" },
    );
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await server?.stop();
    await cleanup?.();
  });

  it("signs in with a single-use code and drops it from the address bar", async () => {
    await page.goto(`${server.url}/console/`);
    await expect.poll(() => page.getByLabel("Sign-in code").isVisible()).toBe(true);
    await audit("sign-in");
    const login = await consoleLogin(path.join(root, "server"), "--role", "admin", "--name", "Ana");
    await page.goto(login.url);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    expect(page.url()).not.toContain(login.code);
    expect(page.url()).not.toContain("#code");
    await page.getByText("Signed in as Ana (admin)").waitFor();
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: "ivoai_console", httpOnly: true, sameSite: "Strict" });
    // Nothing of the session is kept where script can read it.
    const stored = await page.evaluate("[localStorage.length, sessionStorage.length, document.cookie]");
    expect(stored).toEqual([0, 0, ""]);
    await audit("overview");
  });

  it("shows an agent's write in the queue without reload, and a keyboard-only approval applies it", async () => {
    await nav("Approvals").click();
    await page.getByRole("heading", { level: 1, name: "Approvals" }).waitFor();
    expect(await page.evaluate("window.__sameDocument = true")).toBe(true);
    const pending = await call("memory_write_page", {
      path: "decisions/queue",
      title: "Queue choice",
      body: "# Queue choice\n\nWe use the axolotl queue for billing events.",
    });
    expect(pending.status).toBe("PENDING_HUMAN_APPROVAL");
    const row = requests().getByRole("option", { name: /decisions\/queue/ });
    await row.waitFor();
    // The same document: the row arrived by polling, not by a reload.
    expect(await page.evaluate("window.__sameDocument")).toBe(true);

    await requests().focus();
    await page.keyboard.press("Home");
    await page.keyboard.press("Enter");
    const details = page.getByRole("region", { name: "Approval details" });
    await details.getByRole("heading", { name: /decisions\/queue/ }).waitFor();
    await expect
      .poll(() => details.getByText("+ We use the axolotl queue for billing events.").count())
      .toBe(1);
    await audit("approvals");
    // Tab to the Approve button and press it: no mouse.
    for (let step = 0; step < 15; step++) {
      const focused = await page.evaluate(FOCUSED_TEXT);
      if (focused === "Approve") break;
      await page.keyboard.press("Tab");
    }
    expect(await page.evaluate(FOCUSED_TEXT)).toBe("Approve");
    await page.keyboard.press("Enter");
    await details
      .getByRole("status")
      .filter({ hasText: /^Applied\./ })
      .waitFor();

    const read = await call("memory_read_page", { path: "decisions/queue" });
    expect(read.status).toBe("SUCCESS");
    expect(JSON.stringify(read.data)).toContain("axolotl queue");
  });

  it("rejects another request with a reason, and refuses a rejection without one", async () => {
    const pending = await call("memory_write_page", {
      path: "decisions/cache",
      body: "Use no cache at all.",
    });
    const id = pending.data.approval_id as string;
    await requests()
      .getByRole("option", { name: /decisions\/cache/ })
      .click();
    const details = page.getByRole("region", { name: "Approval details" });
    await details.getByRole("heading", { name: /decisions\/cache/ }).waitFor();
    await details.getByRole("button", { name: "Reject" }).click();
    await details.getByRole("alert").filter({ hasText: "A reason is required" }).waitFor();
    await details.getByLabel("Reason").fill("contradicts the caching ADR");
    await details.getByRole("button", { name: "Reject" }).click();
    await details
      .getByRole("status")
      .filter({ hasText: /^Rejected\./ })
      .waitFor();
    const status = await call("memory_approval_status", { approval_id: id });
    expect(status.data).toMatchObject({ status: "rejected" });
    expect(JSON.stringify(status.data)).toContain("contradicts the caching ADR");
  });

  it("renders an agent's <script> title inert, in the queue and on the page", async () => {
    const pending = await call("memory_write_page", {
      path: "notes/hostile",
      title: SCRIPT_TITLE,
      body: `Body with ${SCRIPT_TITLE} inside.`,
    });
    expect(pending.status).toBe("PENDING_HUMAN_APPROVAL");
    await requests()
      .getByRole("option", { name: /notes\/hostile/ })
      .click();
    const details = page.getByRole("region", { name: "Approval details" });
    await details.getByText(SCRIPT_TITLE, { exact: false }).first().waitFor();
    await details.getByRole("button", { name: "Approve" }).click();
    await details
      .getByRole("status")
      .filter({ hasText: /^Applied\./ })
      .waitFor();

    await nav("Knowledge").click();
    await page.getByLabel("Filter pages").fill("hostile");
    await page.getByRole("link", { name: SCRIPT_TITLE }).click();
    const pageDetails = page.getByRole("region", { name: "Page details" });
    await pageDetails.getByRole("heading", { level: 2 }).filter({ hasText: "<script>" }).waitFor();
    expect(await pageDetails.getByRole("heading", { level: 2 }).textContent()).toBe(SCRIPT_TITLE);
    const injected = await page.evaluate(
      `({ pwned: window.__pwned ?? null, scripts: [...document.querySelectorAll("script")].filter((s) => !s.src).length,
          images: document.querySelectorAll("main img").length })`,
    );
    expect(injected).toEqual({ pwned: null, scripts: 0, images: 0 });
    await audit("knowledge page");
  });

  it("searches the documents through context_search", async () => {
    // A console search runs context_search too, and is audited as one.
    toolCalls++;
    await page.getByLabel("Search documents").fill("how often does billing retry");
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByText("Billing retries").first().waitFor();
    await page
      .getByText(/docs:billing\.md/)
      .first()
      .waitFor();
    await audit("knowledge search");
  });

  it("counts the agent's tool calls in the activity chart and table", async () => {
    await nav("Activity").click();
    await page.getByRole("heading", { level: 1, name: "Activity" }).waitFor();
    const chart = page.getByRole("img", { name: /^Tool calls over time:/ });
    await chart.waitFor();
    const label = (await chart.getAttribute("aria-label")) ?? "";
    expect(Number(/: (\d+) calls/.exec(label)?.[1])).toBe(toolCalls);
    await page.getByRole("button", { name: "Show table" }).click();
    const byTool = page.getByRole("table", { name: "By tool" });
    // The first data cell is Calls: three writes went through MCP.
    const writes = byTool.getByRole("row", { name: /memory_write_page/ }).getByRole("cell");
    await expect.poll(() => writes.first().textContent()).toBe("3");
    await audit("activity");
  });

  it("revokes an enrolled client, whose next request is then 401", async () => {
    const { code } = await createCode(path.join(root, "server"));
    const victim = (await (
      await fetch(`${server.url}/v1/enroll`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, client_name: "victim-laptop" }),
      })
    ).json()) as { credential: string };
    const probe = () =>
      fetch(`${server.url}/v1/admin/status`, { headers: { authorization: `Bearer ${victim.credential}` } });
    expect((await probe()).status).toBe(200);
    await nav("Clients").click();
    await page.getByRole("heading", { level: 1, name: "Clients" }).waitFor();
    await audit("clients");
    await page.getByRole("button", { name: "Revoke victim-laptop" }).click();
    await page.getByRole("button", { name: "Confirm revoke" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Revoked/ })
      .waitFor();
    expect((await probe()).status).toBe(401);
  });

  it("refuses a stale CSRF token after signing out and in again", async () => {
    const csrf = () =>
      page.evaluate<string>(
        `fetch("/v1/console/session").then((response) => response.json()).then((body) => body.csrf_token)`,
      );
    const stale = await csrf();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Sign-in code").waitFor();
    const login = await consoleLogin(path.join(root, "server"), "--role", "approver", "--name", "Bo");
    await page.getByLabel("Sign-in code").fill(login.code);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in as Bo (approver)").waitFor();
    expect(await csrf()).not.toBe(stale);
    const answer = await page.evaluate(
      `fetch("/v1/approvals/apr_unknown/approve", { method: "POST", body: "{}",
         headers: { "content-type": "application/json", "x-csrf-token": ${JSON.stringify(stale)} } })
        .then(async (response) => ({ status: response.status, body: await response.json() }))`,
    );
    expect(answer).toMatchObject({ status: 403, body: { error: "csrf_failed" } });
  });

  it("finds no serious or critical accessibility violation on any view", () => {
    expect(Object.keys(violations).sort()).toEqual(
      [
        "activity",
        "approvals",
        "clients",
        "knowledge page",
        "knowledge search",
        "overview",
        "sign-in",
      ].sort(),
    );
    for (const [view, found] of Object.entries(violations))
      expect({ view, found }).toEqual({ view, found: [] });
  });
});

describe("web console session expiry", () => {
  it("returns an idle session to sign-in although the page keeps polling", async () => {
    const { dir, cleanup } = await tempDir("ivoai-console-idle-");
    let server: RunningServer | undefined;
    let browser: Browser | undefined;
    try {
      const serverRoot = await initTinyServer(dir);
      await setIdleTimeout(serverRoot, "5s");
      server = await startServer(serverRoot);
      browser = await launchChromium();
      const page = await browser.newPage();
      const login = await consoleLogin(serverRoot, "--role", "viewer");
      await page.goto(login.url);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      // The approvals view polls every 2 s, more often than the 5 s idle timeout: polling is no sign of a person,
      // so with nobody touching the page the session still ends.
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Approvals" }).click();
      await page.getByLabel("Sign-in code").waitFor({ timeout: 20_000 });
      await page.getByRole("status").filter({ hasText: "Your session ended" }).waitFor();
      const status = await page.evaluate(`fetch("/v1/console/session").then((response) => response.status)`);
      expect(status).toBe(401);
    } finally {
      await browser?.close();
      await server?.stop();
      await cleanup();
    }
  });
});
