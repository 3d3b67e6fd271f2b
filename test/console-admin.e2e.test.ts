// The console's administration in real headless Chromium against the built server: an admin sees when a client
// last called, a session's tool calls in its timeline, filters and exports the audit log (JSON Lines and CSV
// downloads), and revokes a viewer's console session (signed out at its next request); a viewer never gets the
// sessions API or view. axe-core checks each view at 1280 and 390 px wide.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, seriousViolations } from "./browser.js";
import { consoleLogin } from "./console-helpers.js";
import { connectMcp, createCode, initWithDocs, type RunningServer, startServer, tempDir } from "./helpers.js";

const AGENT = "agent-laptop";
const SESSION = "sess-admin-1";
/** A tool name (an agent's text) a spreadsheet would run as a formula: the call is refused, and audited. */
const FORMULA_TOOL = '=HYPERLINK("http://evil.test")';
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 390, height: 844 };

describe("console administration in Chromium", () => {
  let root: string;
  let serverRoot: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let agent: Client;
  let agentId: string;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  const violations: Record<string, unknown[]> = {};
  const overflow: Record<string, number[]> = {};

  const nav = (p: Page, name: string) =>
    p.getByRole("navigation", { name: "Main" }).getByRole("link", { name });
  /** axe-core on the page as it is, at both widths (and in the dark theme at the narrow one). */
  const audit = async (view: string) => {
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      violations[`${view} @${size.width}`] = await seriousViolations(page);
      if (size === NARROW) {
        await page.emulateMedia({ colorScheme: "dark" });
        violations[`${view} @${size.width} dark`] = await seriousViolations(page);
        await page.emulateMedia({ colorScheme: "light" });
      }
      // Wide tables scroll inside their own region: the page itself never scrolls sideways.
      const widths = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]");
      overflow[`${view} @${size.width}`] = widths as number[];
    }
    await page.setViewportSize(WIDE);
  };
  const open = async (p: Page, name: string) => {
    await nav(p, name).click();
    await p.getByRole("heading", { level: 1, name }).waitFor();
  };

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-console-admin-"));
    serverRoot = path.join(root, "server");
    const docs = path.join(root, "docs");
    await mkdir(docs, { recursive: true });
    await writeFile(
      path.join(docs, "billing.md"),
      "# Billing retries\n\nThe billing queue retries five times.\n",
    );
    await initWithDocs(serverRoot, docs);
    server = await startServer(serverRoot);
    const { code } = await createCode(serverRoot);
    const enrolled = (await (
      await fetch(`${server.url}/v1/enroll`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, client_name: AGENT }),
      })
    ).json()) as { credential: string; client_id: string };
    agentId = enrolled.client_id;
    agent = await connectMcp(`${server.url}/v1/mcp/context`, enrolled.credential, {
      "x-ivoai-session-id": SESSION,
    });
    browser = await launchChromium();
    admin = await browser.newContext({ viewport: WIDE, acceptDownloads: true });
    page = await admin.newPage();
    const login = await consoleLogin(serverRoot, "--role", "admin", "--name", "Ada");
    await page.goto(login.url);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await server?.stop();
    await cleanup?.();
  });

  it("shows when a client last called, and the time moves after an MCP call", async () => {
    await open(page, "Clients");
    const row = page
      .getByRole("table", { name: "Enrolled clients" })
      .getByRole("row", { name: new RegExp(AGENT) });
    await row.getByRole("cell").nth(3).getByText("never").waitFor();
    await audit("clients");
    const before = Date.now();
    const result = await agent.callTool({ name: "context_search", arguments: { query: "billing" } });
    expect(result.isError).not.toBe(true);
    // An unknown tool is refused (REJECTED in the audit log), by an error result or a protocol error.
    await agent.callTool({ name: FORMULA_TOOL, arguments: {} }).catch((error: unknown) => error);
    // Back to the view: it reads the clients again.
    await open(page, "Overview");
    await open(page, "Clients");
    // The Last used cell (after the ID, Scopes and Enrolled cells).
    const time = row.getByRole("cell").nth(3).locator("time");
    await time.waitFor();
    const lastUsed = Date.parse((await time.getAttribute("datetime")) ?? "");
    expect(lastUsed).toBeGreaterThanOrEqual(before - 1000);
  });

  it("lists a session's tool calls in its timeline", async () => {
    await open(page, "Activity");
    await page.getByRole("table", { name: "By session" }).getByRole("button", { name: SESSION }).click();
    const timeline = page.getByRole("region", { name: new RegExp(`Session timeline: ${SESSION}`) });
    await timeline.getByText("Tool call").first().waitFor();
    const items = await timeline.getByRole("listitem").allTextContents();
    expect(items.filter((text) => text.includes("Tool call context_search · SUCCESS"))).toHaveLength(1);
    expect(items.filter((text) => text.includes(`Tool call ${FORMULA_TOOL} · REJECTED`))).toHaveLength(1);
    expect(items.every((text) => text.includes(`by ${AGENT}`))).toBe(true);
    expect(await timeline.getByText(/No events recorded/).count()).toBe(0);
    await audit("activity timeline");
  });

  it("filters the audit log and exports the filtered events as JSON Lines and CSV", async () => {
    await open(page, "Audit");
    const table = page.getByRole("table", { name: /Audit events, newest first/ });
    await table.getByRole("row").nth(1).waitFor();
    await audit("audit");
    await page.getByLabel("Credential").selectOption(agentId);
    await page.getByLabel("Text", { exact: true }).fill("HYPERLINK");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => table.getByRole("row").count(), { timeout: 30_000 }).toBe(2);
    await table.getByRole("cell", { name: AGENT }).waitFor();

    const download = async (name: string) => {
      const [file] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("link", { name }).click(),
      ]);
      return { name: file.suggestedFilename(), body: await readFile((await file.path()) as string, "utf8") };
    };
    const jsonl = await download("Export JSON Lines");
    expect(jsonl.name).toMatch(/^ivoai-audit-.*\.jsonl$/);
    const lines = jsonl.body
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      lines.map((line) => [
        line.kind,
        line.tool,
        line.status,
        line.credential_id,
        line.credential_name,
        line.session_id,
      ]),
    ).toEqual([["tool_call", FORMULA_TOOL, "REJECTED", agentId, AGENT, SESSION]]);
    const csv = await download("Export CSV");
    expect(csv.name).toMatch(/^ivoai-audit-.*\.csv$/);
    const rows = csv.body.split("\r\n");
    expect(rows[0]).toBe(
      "id,at,kind,tool,endpoint,tier,credential_id,credential_name,session_id,status,guardrail_checked," +
        "latency_ms,tokens_consumed,actor,detail",
    );
    expect(rows).toHaveLength(3);
    // The formula is quoted and starts with an apostrophe: a spreadsheet shows it as text.
    expect(rows[1]).toContain(
      `,tool_call,"'=HYPERLINK(""http://evil.test"")",ivoai-context,,${agentId},${AGENT},${SESSION},REJECTED,true,`,
    );
    // No tier (the endpoint has no such tool); why it was refused is the detail column.
    expect(rows[1]).toMatch(/,,"\{""rejected"":""unknown_tool"",[^\r\n]*\}"$/);
    expect(rows[2]).toBe("");
    // Without the text filter, the export holds both of the agent's calls, newest first.
    await page.getByLabel("Text", { exact: true }).fill("");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await expect.poll(() => table.getByRole("row").count(), { timeout: 30_000 }).toBe(3);
    const all = await download("Export JSON Lines");
    expect(
      all.body
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as { tool: string }).tool),
    ).toEqual([FORMULA_TOOL, "context_search"]);
  });

  it("lets an admin revoke a viewer's session, which is signed out at its next request", async () => {
    const viewerContext = await browser.newContext({ viewport: NARROW });
    try {
      const viewer = await viewerContext.newPage();
      const login = await consoleLogin(serverRoot, "--role", "viewer", "--name", "Vic");
      await viewer.goto(login.url);
      await viewer.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      // A viewer has no Sessions link, and the API refuses it.
      await nav(viewer, "Audit").waitFor();
      expect(await nav(viewer, "Sessions").count()).toBe(0);
      const viewerFetch = (url: string) =>
        viewer.evaluate<number>(`fetch(${JSON.stringify(url)}).then((response) => response.status)`);
      expect(await viewerFetch("/v1/console/sessions")).toBe(403);
      expect(await viewerFetch("/v1/admin/status")).toBe(200);

      await open(page, "Sessions");
      const table = page.getByRole("table", { name: "Console sessions, newest first" });
      await table.getByRole("row", { name: /Ada \(this session\)/ }).waitFor();
      const vic = table.getByRole("row", { name: /Vic/ });
      await vic.getByText("active").waitFor();
      expect(await table.textContent()).not.toMatch(/ivoai_cs_/);
      await audit("sessions");
      await vic.getByRole("button", { name: "Revoke Vic" }).click();
      await expect
        .poll(() => page.evaluate("document.activeElement?.textContent?.trim() ?? null"))
        .toBe("Confirm revoke");
      await page.getByRole("button", { name: "Confirm revoke" }).click();
      await page.getByRole("status").filter({ hasText: "Revoked Vic's session" }).waitFor();
      await vic.getByText("revoked", { exact: true }).waitFor();
      expect(await page.evaluate("document.activeElement?.tagName")).toBe("H1");
      expect(await viewerFetch("/v1/admin/status")).toBe(401);
      // The admin's own session goes on.
      expect(
        await page.evaluate<number>(`fetch("/v1/console/sessions").then((response) => response.status)`),
      ).toBe(200);
    } finally {
      await viewerContext.close();
    }
  });

  it("finds no serious or critical accessibility violation and no sideways page scroll on the administration views", () => {
    expect(Object.keys(violations).sort()).toEqual(
      ["activity timeline", "audit", "clients", "sessions"]
        .flatMap((view) => [`${view} @1280`, `${view} @390`, `${view} @390 dark`])
        .sort(),
    );
    for (const [view, found] of Object.entries(violations))
      expect({ view, found }).toEqual({ view, found: [] });
    for (const [view, [scrollWidth, innerWidth]] of Object.entries(overflow) as [string, number[]][])
      expect({ view, scrollWidth }).toEqual({ view, scrollWidth: innerWidth });
  });
});
