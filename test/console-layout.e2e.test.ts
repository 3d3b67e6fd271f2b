// The web console as people use it every day, in real Chromium against the built server: every view at a phone
// (390×844) and a desktop (1280×800) size, in light and dark, has no sideways page scroll and no serious or
// critical axe-core violation; focus moves to the new view's heading; the idle warning comes before the sign-out
// and a half-typed field survives it.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AxeViolation, launchChromium, seriousViolations } from "./browser.js";
import { consoleLogin, initTinyServer, setIdleTimeout } from "./console-helpers.js";
import {
  connectMcp,
  enrolledCredential,
  initWithDocs,
  type RunningServer,
  startServer,
  tempDir,
} from "./helpers.js";

type Envelope = { status: string; data: Record<string, unknown> };

const SIZES = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;
const SCHEMES = ["light", "dark"] as const;
/** A title with no break opportunity and combining marks: it must wrap or clip inside its box, never widen the page. */
const LONG_TITLE = `${"Unbroken".repeat(20)} Z̸̡̢̛̛̺̱͓̲a̶̧̛̜̼l̷̨̡̛g̸̡̛̛o̶̧̢̧`;

/** Set to a directory to keep a full-page screenshot of each view, size and theme (for looking, not asserting). */
const SHOTS = process.env.IVOAI_LAYOUT_SHOTS;

/** A document scrolled sideways: wider than the window. */
const PAGE_WIDTHS = "[document.documentElement.scrollWidth, window.innerWidth]";

async function seedServer(root: string, url: string): Promise<void> {
  const agent = await connectMcp(`${url}/v1/memory/mcp`, await enrolledCredential(url, root), {
    "x-ivoai-session-id": "sess-layout",
    "x-ivoai-project": "git:acme/api",
  });
  const decider = await enrolledCredential(url, root, "approvals:read,approvals:decide");
  const call = async (name: string, args: Record<string, unknown>) =>
    (await agent.callTool({ name, arguments: args })).structuredContent as Envelope;
  try {
    const writes = [
      {
        path: "decisions/queue",
        title: "Queue choice",
        body: "# Queue choice\n\nWe use the axolotl queue for billing events. See [[decisions/retries]].",
        tags: ["billing"],
        relations: { related: ["decisions/retries", "decisions/not-written-yet"] },
      },
      { path: "decisions/retries", title: "Retries", body: "Five retries, then park." },
    ];
    for (const write of writes) {
      const pending = await call("memory_write_page", write);
      const id = pending.data.approval_id as string;
      const decided = await fetch(`${url}/v1/approvals/${id}/approve`, {
        method: "POST",
        headers: { authorization: `Bearer ${decider}`, "content-type": "application/json" },
        body: "{}",
      });
      if (decided.status !== 200) throw new Error(`approve ${id}: ${decided.status} ${await decided.text()}`);
    }
    // Left pending, for the approvals view: a title that is hard to lay out.
    await call("memory_write_page", { path: "notes/long", title: LONG_TITLE, body: `${LONG_TITLE}\n` });
    await call("memory_search", { query: "queue" });
  } finally {
    await agent.close();
  }
}

/** Waits until the view shows its h1 and no query is still loading. */
async function settled(page: Page): Promise<void> {
  await page.locator("main h1").first().waitFor({ timeout: 30_000 });
  await expect
    .poll(
      () =>
        page
          .locator("main")
          .getByText(/^Loading /)
          .count(),
      { timeout: 30_000 },
    )
    .toBe(0);
}

describe("console layout at phone and desktop sizes, light and dark", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-console-layout-"));
    const docs = path.join(root, "docs");
    await mkdir(docs, { recursive: true });
    await writeFile(path.join(docs, "billing.md"), "# Billing retries\n\nThe queue retries five times.\n");
    const serverRoot = path.join(root, "server");
    await initWithDocs(serverRoot, docs);
    server = await startServer(serverRoot);
    await seedServer(serverRoot, server.url);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const login = await consoleLogin(serverRoot, "--role", "admin", "--name", "Ana");
    await page.goto(login.url);
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor({ timeout: 30_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await cleanup?.();
  });

  it("every view fits the window and passes axe at both sizes in both themes", async () => {
    // Every view the main nav offers (a view added later is checked too), the knowledge view with a page open.
    const links = await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link")
      .evaluateAll((anchors) =>
        anchors.map((a) => new URL((a as unknown as { href: string }).href).pathname),
      );
    expect(links.length).toBeGreaterThanOrEqual(5);
    const views = links.map((pathname) =>
      pathname.endsWith("/knowledge")
        ? `${pathname}?scope=${encodeURIComponent("git:acme/api")}&path=decisions%2Fqueue`
        : pathname,
    );
    // And a pending request's own page: the details with its change description and diff.
    const pending = (await page.evaluate(
      `fetch("/v1/approvals?status=pending&limit=1").then((r) => r.json())`,
    )) as { approvals: { id: string }[] };
    const request = pending.approvals[0]?.id;
    expect(request, "the seeded server has a pending request").toBeDefined();
    views.push(`/console/approvals/${request}`);
    const failures: { where: string; widths?: number[]; violations?: AxeViolation[] }[] = [];
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const view of views) {
          const where = `${view} at ${size.name} (${size.width}px), ${scheme}`;
          await page.goto(`${server.url}${view}`);
          await settled(page);
          const widths = (await page.evaluate(PAGE_WIDTHS)) as number[];
          if ((widths[0] ?? 0) > (widths[1] ?? 0)) failures.push({ where, widths });
          const violations = await seriousViolations(page);
          if (violations.length > 0) failures.push({ where, violations });
          if (SHOTS) {
            const name = `${view.replace(/^\/console\/?/, "").replace(/\?.*/, "") || "overview"}`;
            await page.screenshot({
              path: path.join(SHOTS, `${name}-${size.name}-${scheme}.png`),
              fullPage: true,
            });
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("shows the sign-in screen at both sizes in both themes without page scroll or serious violations", async () => {
    const fresh = await browser.newContext();
    try {
      const signedOut = await fresh.newPage();
      const failures: unknown[] = [];
      for (const size of SIZES) {
        await signedOut.setViewportSize({ width: size.width, height: size.height });
        for (const scheme of SCHEMES) {
          await signedOut.emulateMedia({ colorScheme: scheme });
          await signedOut.goto(`${server.url}/console/`);
          await signedOut.getByLabel("Sign-in code").waitFor({ timeout: 30_000 });
          const where = `sign-in at ${size.name}, ${scheme}`;
          const widths = (await signedOut.evaluate(PAGE_WIDTHS)) as number[];
          if ((widths[0] ?? 0) > (widths[1] ?? 0)) failures.push({ where, widths });
          const violations = await seriousViolations(signedOut);
          if (violations.length > 0) failures.push({ where, violations });
        }
      }
      expect(failures).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it("draws charts at the phone's width with labels at their size, and revoke buttons can be reached", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(`${server.url}/console/activity`);
    await settled(page);
    const label = page.locator(".chart .axes text").first();
    await label.waitFor({ timeout: 30_000 });
    // The SVG is drawn at its shown width: a 12 px label is about 12 px tall, not shrunk to half.
    expect((await label.boundingBox())?.height ?? 0).toBeGreaterThanOrEqual(10);

    await page.goto(`${server.url}/console/clients`);
    await settled(page);
    const revoke = page.getByRole("button", { name: /^Revoke/ }).first();
    await revoke.scrollIntoViewIfNeeded();
    const box = await revoke.boundingBox();
    expect(box).not.toBeNull();
    expect((box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? 0) <= 390).toBe(true);
  });

  it("moves focus to the new view's h1 on a view change, not on the first load", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${server.url}/console/`);
    await settled(page);
    expect(await page.evaluate("document.activeElement === document.body")).toBe(true);
    for (const name of ["Knowledge", "Clients", "Overview"]) {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name }).click();
      await expect
        .poll(() => page.evaluate("[document.activeElement?.tagName, document.activeElement?.textContent]"), {
          timeout: 30_000,
        })
        .toEqual(["H1", name]);
    }
  });

  it("remembers a dark theme choice and applies it on the next load", async () => {
    await page.emulateMedia({ colorScheme: "light" });
    await page.goto(`${server.url}/console/`);
    await settled(page);
    const background = () => page.evaluate("getComputedStyle(document.documentElement).backgroundColor");
    const light = await background();
    await page.getByLabel("Theme").selectOption("dark");
    expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
    const dark = await background();
    expect(dark).not.toBe(light);
    await page.reload();
    await settled(page);
    expect(await page.evaluate("document.documentElement.dataset.theme")).toBe("dark");
    expect(await background()).toBe(dark);
    await page.getByLabel("Theme").selectOption("system");
    expect(await page.evaluate("document.documentElement.dataset.theme ?? null")).toBeNull();
  });
});

describe("console idle warning", () => {
  it("warns a minute before the idle sign-out, Stay signed in keeps the session, and a draft survives", async () => {
    const { dir, cleanup } = await tempDir("ivoai-console-idle-warn-");
    let server: RunningServer | undefined;
    let browser: Browser | undefined;
    try {
      const serverRoot = await initTinyServer(dir);
      // The warning shows 60 s before the idle end: 10 s after the last input. (The server moves the idle end
      // only when the input is a tenth of the timeout newer than the last move, 7 s here: Stay signed in then does.)
      await setIdleTimeout(serverRoot, "70s");
      server = await startServer(serverRoot);
      browser = await launchChromium();
      const page = await browser.newPage();
      const login = await consoleLogin(serverRoot, "--role", "viewer");
      await page.goto(login.url);
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor({ timeout: 30_000 });
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Knowledge" }).click();
      await page.getByLabel("Search documents").fill("half-typed question");

      const warning = page.getByRole("alertdialog", { name: "Still there?" });
      await warning.waitFor({ timeout: 30_000 });
      expect(await page.evaluate("document.activeElement?.textContent")).toBe("Stay signed in");
      await page.getByRole("button", { name: "Stay signed in" }).click();
      await warning.waitFor({ state: "hidden", timeout: 30_000 });

      // Nobody touches the page now: the warning comes back, then the session ends.
      await warning.waitFor({ timeout: 30_000 });
      await page.getByLabel("Sign-in code").waitFor({ timeout: 90_000 });
      await page.getByRole("status").filter({ hasText: "Your session ended" }).waitFor();

      const again = await consoleLogin(serverRoot, "--role", "viewer");
      await page.getByLabel("Sign-in code").fill(again.code);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { level: 1, name: "Knowledge" }).waitFor({ timeout: 30_000 });
      expect(await page.getByLabel("Search documents").inputValue()).toBe("half-typed question");
    } finally {
      await browser?.close();
      await server?.stop();
      await cleanup();
    }
  }, 240_000);
});
