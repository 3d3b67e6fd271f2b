// The approvals views as an approver uses them, in real headless Chromium against the built server, at a
// laptop's 1280×800 and a phone's 390×844: an agent's same-body replace that sets an expiry shows the deletion
// date (never "no changes"), title/tag/relation changes are shown, a pasted /console/approvals/<id> opens that
// request, the keyboard stays on its request when new ones arrive, bulk approve and reject apply each request
// exactly once, agent text cannot draw outside its row, and axe-core finds nothing serious.
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AxeViolation, launchChromium, seriousViolations } from "./browser.js";
import { consoleLogin, initTinyServer } from "./console-helpers.js";
import { connectMcp, enrolledCredential, type RunningServer, startServer, tempDir } from "./helpers.js";

type Envelope = { status: string; data: Record<string, unknown> };

const VIEWPORTS = [
  { name: "laptop", width: 1280, height: 800, colorScheme: "light" },
  { name: "phone", width: 390, height: 844, colorScheme: "light" },
  { name: "dark", width: 1280, height: 800, colorScheme: "dark" },
] as const;

/** Combining marks stacked on each letter: drawn far above and below the line unless clipped. */
const ZALGO = `Z${"\u030d\u030e\u0304\u0305\u033f\u0311".repeat(8)}algo${"\u0316\u0317\u0318\u0319".repeat(8)} title`;

let root: string;
let cleanup: () => Promise<void>;
let server: RunningServer;
let agent: Client;
let browser: Browser;

const call = async (name: string, args: Record<string, unknown>): Promise<Envelope> =>
  (await agent.callTool({ name, arguments: args })).structuredContent as Envelope;

/** An agent's memory_write_page: returns the approval id it waits on. */
async function propose(args: Record<string, unknown>): Promise<string> {
  const result = await call("memory_write_page", args);
  if (result.status !== "PENDING_HUMAN_APPROVAL")
    throw new Error(`write not pending: ${JSON.stringify(result)}`);
  return result.data.approval_id as string;
}

async function approvalStatus(id: string): Promise<string> {
  return String((await call("memory_approval_status", { approval_id: id })).data.status);
}

async function pageVersion(pagePath: string): Promise<number> {
  const read = await call("memory_read_page", { path: pagePath });
  if (read.status !== "SUCCESS") throw new Error(`read ${pagePath}: ${JSON.stringify(read)}`);
  return Number((read.data.page as { version?: number } | undefined)?.version);
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir("ivoai-console-approvals-"));
  server = await startServer(await initTinyServer(root));
  agent = await connectMcp(
    `${server.url}/v1/memory/mcp`,
    await enrolledCredential(server.url, path.join(root, "server")),
    { "x-ivoai-session-id": "sess-approvals", "x-ivoai-project": "git:acme/api" },
  );
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await server?.stop();
  await cleanup?.();
});

describe.each(VIEWPORTS)(
  "approvals at $width×$height, $colorScheme",
  ({ name, width, height, colorScheme }) => {
    let page: Page;
    const violations: Record<string, AxeViolation[]> = {};
    /** Paths of this viewport's pages, apart from the other viewport's. */
    const at = (rest: string) => `${name}/${rest}`;
    const requests = () => page.getByRole("listbox", { name: "Approval requests" });
    const row = (pagePath: string) =>
      requests().getByRole("option", { name: new RegExp(`:${pagePath.replace(/[./]/g, "\\$&")}\\b`) });
    const details = () => page.getByRole("region", { name: "Approval details" });
    const audit = async (view: string) => {
      violations[view] = await seriousViolations(page);
    };

    beforeAll(async () => {
      const context = await browser.newContext({ viewport: { width, height }, colorScheme });
      page = await context.newPage();
      const login = await consoleLogin(
        path.join(root, "server"),
        "--role",
        "approver",
        "--name",
        `Ana ${name}`,
      );
      await page.goto(login.url);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
    });
    afterAll(async () => {
      await page?.context().close();
    });

    it("bulk-approves three checked requests once each, after a confirmation saying what they do", async () => {
      const ids = [];
      for (const rest of ["one", "two", "three"]) {
        ids.push(
          await propose({
            path: at(rest),
            title: `Page ${rest}`,
            tags: ["alpha", "old"],
            body: `# Page ${rest}\n\nThe ${rest} body stays the same.\n`,
          }),
        );
      }
      await page.goto(`${server.url}/console/approvals`);
      for (const rest of ["one", "two", "three"]) {
        await row(at(rest)).waitFor();
        await row(at(rest)).locator(".ap-check").click();
        await expect.poll(() => row(at(rest)).getAttribute("aria-checked")).toBe("true");
      }
      await audit("list with checks");
      await page.getByRole("button", { name: "Approve 3" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("Approve 3 requests: 3 write pages");
      expect(
        await page.evaluate("document.querySelector('[role=dialog]').contains(document.activeElement)"),
      ).toBe(true);
      await audit("bulk dialog");
      // A double click confirms once: one request, each change applied once.
      await dialog.getByRole("button", { name: "Approve 3" }).dblclick();
      const results = page.getByRole("heading", { level: 2, name: /Bulk approval: 3 applied/ });
      await results.waitFor();
      expect(await page.evaluate("document.activeElement?.id")).toBe("ap-results-title");
      for (const id of ids) expect(await approvalStatus(id)).toBe("applied");
      for (const rest of ["one", "two", "three"]) expect(await pageVersion(at(rest))).toBe(1);
    });

    it("shows a same-body replace that sets an expiry as a deletion, never as no changes", async () => {
      const expires = new Date(Date.now() + 120_000).toISOString();
      const id = await propose({
        path: at("one"),
        title: "Page one",
        tags: ["alpha", "old"],
        body: "# Page one\n\nThe one body stays the same.\n",
        expires_at: expires,
      });
      await page.goto(`${server.url}/console/approvals`);
      await row(at("one")).click();
      // Opening from the list gives the request its own URL.
      await expect.poll(() => new URL(page.url()).pathname).toBe(`/console/approvals/${id}`);
      const danger = details().getByRole("note", { name: "Approving deletes a page" });
      await danger.waitFor();
      // Focus lands on the heading, which a screen reader announces with the deletion as its description.
      await expect
        .poll(() => page.evaluate("document.activeElement?.getAttribute('aria-describedby')"))
        .toBe(await danger.getAttribute("id"));
      expect(await danger.isVisible()).toBe(true);
      expect(await danger.textContent()).toMatch(/deleted/i);
      expect(await danger.locator(`time[datetime]`).count()).toBeGreaterThan(0);
      const text = (await details().textContent()) ?? "";
      expect(text).not.toMatch(/no changes/i);
      expect(text).toMatch(/Metadata only/);
      // The loud line is also where the eye lands: above the fold of the details, bigger than the facts.
      const fontSize = await page.evaluate<number>(
        `Number.parseFloat(getComputedStyle(document.querySelector(".ap-danger")).fontSize)`,
      );
      expect(fontSize).toBeGreaterThan(16);
      await audit("detail with expiry");
      // Back returns to the list with nothing open.
      await page.goBack();
      await expect.poll(() => new URL(page.url()).pathname).toBe("/console/approvals");
      await details().getByText("Select a request").waitFor();
    });

    it("shows title, tag and relation changes, and opens a pasted link to the request", async () => {
      const id = await propose({
        path: at("two"),
        title: "Page two renamed",
        tags: ["alpha", "beta"],
        relations: { related_to: [at("three")] },
        body: "# Page two\n\nThe two body stays the same.\n",
      });
      // A fresh tab on the pasted link: the request opens although it was never clicked in the list.
      const tab = await page.context().newPage();
      try {
        await tab.goto(`${server.url}/console/approvals/${id}`);
        const shown = tab.getByRole("region", { name: "Approval details" });
        await shown.getByRole("heading", { level: 2, name: new RegExp(at("two")) }).waitFor();
        await shown.getByText("Page two renamed").first().waitFor();
        const text = (await shown.textContent()) ?? "";
        expect(text).toContain("Page two");
        expect(await shown.locator("ins.ap-chip-add").allTextContents()).toContain("+beta");
        expect(await shown.locator("del.ap-chip-del").allTextContents()).toContain("−old");
        expect(text).toContain(at("three"));
        expect(text).not.toMatch(/no changes/i);
        await audit("detail with title, tags and relations");
        // The split diff fits: at 390 px it scrolls inside its box, never the page.
        await shown.getByRole("button", { name: "Split" }).click();
        await shown.getByRole("region", { name: new RegExp(`Body of .*${at("two")}`) }).waitFor();
        expect(await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
        await shown.getByRole("button", { name: "Unified" }).click();
      } finally {
        await tab.close();
      }
    });

    it("keeps the keyboard on the same request when a new one arrives at the top", async () => {
      await page.goto(`${server.url}/console/approvals`);
      await row(at("two")).waitFor();
      await requests().focus();
      await page.keyboard.press("Home");
      await page.keyboard.press("ArrowDown");
      const chosen = await requests().getAttribute("aria-activedescendant");
      expect(chosen).toMatch(/^approval-/);
      const chosenText = await page.locator(`#${chosen}`).locator(".target").textContent();
      await propose({ path: at("newcomer"), body: "A new request arrives while the approver reads.\n" });
      await row(at("newcomer")).waitFor({ timeout: 30_000 });
      expect(await requests().getAttribute("aria-activedescendant")).toBe(chosen);
      await page.keyboard.press("Enter");
      await details()
        .getByRole("heading", { level: 2, name: new RegExp((chosenText ?? "").replace(/[./]/g, "\\$&")) })
        .waitFor();
    });

    it("bulk-rejects two checked requests with a reason", async () => {
      const ids = [
        await propose({ path: at("reject-a"), body: "Reject me.\n" }),
        await propose({ path: at("reject-b"), body: "Reject me too.\n" }),
      ];
      await page.goto(`${server.url}/console/approvals`);
      for (const rest of ["reject-a", "reject-b"]) {
        await row(at(rest)).waitFor();
        await row(at(rest)).locator(".ap-check").click();
      }
      const opener = page.getByRole("button", { name: "Reject 2" });
      await opener.click();
      const dialog = page.getByRole("dialog");
      expect(await dialog.textContent()).toContain("Reject 2 requests: 2 write pages");
      // Escape cancels and gives focus back to the button that opened the dialog.
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Reject 2");
      await opener.click();
      await dialog.getByLabel("Reason").fill("not this sprint");
      await dialog.getByRole("button", { name: "Reject 2" }).click();
      await page.getByRole("heading", { level: 2, name: /Bulk rejection: 2 rejected/ }).waitFor();
      for (const id of ids) expect(await approvalStatus(id)).toBe("rejected");
    });

    it("shows a decision made elsewhere in the open request", async () => {
      const id = await propose({ path: at("decided-elsewhere"), body: "Someone else decides this.\n" });
      await page.goto(`${server.url}/console/approvals/${id}`);
      await details().getByRole("button", { name: "Approve" }).waitFor();
      // A request's own URL is still the Approvals view in the navigation.
      expect(
        await page
          .getByRole("navigation", { name: "Main" })
          .getByRole("link", { name: "Approvals" })
          .getAttribute("aria-current"),
      ).toBe("page");
      // Another tab of the console decides it (the same API any approver uses).
      const answer = await page.evaluate<number>(
        `fetch("/v1/console/session").then((r) => r.json()).then((s) => fetch("/v1/approvals/${id}/reject", {
         method: "POST", headers: { "content-type": "application/json", "x-csrf-token": s.csrf_token },
         body: JSON.stringify({ reason: "decided in another tab" }) })).then((r) => r.status)`,
      );
      expect(answer).toBe(200);
      const notice = details().getByRole("status").filter({ hasText: "Decided while you were looking" });
      await notice.waitFor({ timeout: 30_000 });
      expect(await notice.textContent()).toContain("rejected by Ana");
      expect(await details().getByRole("button", { name: "Approve" }).count()).toBe(0);
    });

    it("keeps combining marks inside their own row", async () => {
      await propose({ path: at("zalgo"), title: ZALGO, body: `${ZALGO}\n` });
      await page.goto(`${server.url}/console/approvals`);
      const zalgo = row(at("zalgo"));
      await zalgo.waitFor();
      const rowId = await zalgo.getAttribute("id");
      const clipped = await page.evaluate<{
        overflow: string;
        summaryOverflow: string;
        summaryText: boolean;
      }>(
        `(() => {
        const element = document.getElementById(${JSON.stringify(rowId)});
        const summary = element.querySelector(".row-summary");
        return {
          overflow: getComputedStyle(element).overflowY,
          summaryOverflow: getComputedStyle(summary).overflowY,
          summaryText: summary.textContent.includes("algo"),
        };
      })()`,
      );
      // The marks reach far past the line; what is painted stops at the summary's and the row's edges.
      expect(clipped.summaryText).toBe(true);
      expect(["hidden", "clip"]).toContain(clipped.overflow);
      expect(["hidden", "clip"]).toContain(clipped.summaryOverflow);
      // In the details too: every box that shows the agent's title clips what is drawn outside it.
      await zalgo.click();
      await details()
        .getByRole("heading", { level: 2, name: new RegExp(at("zalgo")) })
        .waitFor();
      const unclipped = await page.evaluate<string[]>(
        `[...document.querySelectorAll(".ap-detail *")]
        .filter((element) => element.children.length === 0 && element.textContent.includes("\\u0316"))
        .map((element) => {
          for (let box = element; box && !box.classList.contains("ap-detail"); box = box.parentElement) {
            if (["hidden", "clip"].includes(getComputedStyle(box).overflowY)) return null;
          }
          return element.outerHTML.slice(0, 120);
        })
        .filter(Boolean)`,
      );
      expect(unclipped).toEqual([]);
      const marked = await page.evaluate<number>(
        `[...document.querySelectorAll(".ap-detail *")].filter((e) => e.textContent.includes("\\u0316")).length`,
      );
      expect(marked).toBeGreaterThan(0);
      await audit("list");
    });

    it("finds no serious or critical accessibility violation on the list, the dialog and the details", () => {
      expect(Object.keys(violations).length).toBeGreaterThanOrEqual(5);
      for (const [view, found] of Object.entries(violations))
        expect({ view, found }).toEqual({ view, found: [] });
    });
  },
);

describe("approvals with a 1 MB body", () => {
  it("renders every line of the body's diff, reachable in its keyboard-focusable box", async () => {
    const lines = Array.from({ length: 16_000 }, (_, index) => `line ${index} ${"x".repeat(50)}`);
    const body = `${lines.join("\n")}\n`;
    expect(body.length).toBeGreaterThan(900_000);
    const id = await propose({ path: "big/body", body });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      const login = await consoleLogin(path.join(root, "server"), "--role", "approver", "--name", "Big");
      await page.goto(login.url);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
      await page.goto(`${server.url}/console/approvals/${id}`);
      const box = page.getByRole("region", { name: "Body of git:acme/api:big/body" });
      await box.waitFor();
      expect(await box.getAttribute("tabindex")).toBe("0");
      // Lines arrive in chunks; all of them end up in the document, the last one included.
      await box.getByText("line 15999 ", { exact: false }).waitFor({ state: "attached", timeout: 60_000 });
      expect(await box.locator(".ap-dl").count()).toBe(16_001);
      // The keyboard reaches the end: End in the focused box scrolls it to the last line.
      await box.focus();
      await page.keyboard.press("End");
      await box.getByText("line 15999 ", { exact: false }).waitFor({ state: "visible" });
    } finally {
      await context.close();
    }
  });
});
