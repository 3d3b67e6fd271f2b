// The web console's budgets in real headless Chromium against the built server: initial JavaScript
// (≤ 200 KB gzipped, as transferred) and the approvals view with 10,000 pending requests interactive in
// ≤ 1 s. With --screenshots it also writes one PNG per view to docs/console/ for the README.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { launchChromium } from "../test/browser.js";
import { consoleLogin } from "../test/console-helpers.js";
import { connectMcp, enrolledCredential, initWithDocs, startServer, tempDir } from "../test/helpers.js";
import { seedPendingApprovals } from "./lib/approvals-seed.js";
import { percentile } from "./lib/ir.js";
import { machineLine } from "./lib/server-tree.js";

const pending = Number(process.argv.find((arg) => arg.startsWith("--pending="))?.slice(10) ?? "10000");
const rounds = Number(process.argv.find((arg) => arg.startsWith("--rounds="))?.slice(9) ?? "7");
const screenshots = process.argv.includes("--screenshots");
const JS_BUDGET = 200 * 1024;
const INTERACTIVE_BUDGET_MS = 1000;

const { dir, cleanup } = await tempDir("ivoai-bench-console-");
const root = path.join(dir, "server");
const docs = path.join(dir, "docs");
await mkdir(docs);
await writeFile(
  path.join(docs, "billing.md"),
  "# Billing retries\n\nThe billing queue retries a message five times before it parks it.\n",
);
await writeFile(path.join(docs, "deploys.md"), "# Deploys\n\nDeploys go out from the release branch.\n");
await initWithDocs(root, docs);
await seedPendingApprovals(root, pending);
const server = await startServer(root);
const browser = await launchChromium();
try {
  // Some real traffic for the activity and knowledge views: searches, queries and approved pages.
  const agent = await connectMcp(`${server.url}/v1/memory/mcp`, await enrolledCredential(server.url, root), {
    "x-ivoai-session-id": "sess-bench",
    "x-ivoai-project": "git:acme/api",
  });
  for (let index = 0; index < 20; index++) {
    await agent.callTool({ name: "memory_query", arguments: { query: `billing retries ${index}` } });
  }
  await agent.callTool({
    name: "memory_write_page",
    arguments: { path: "decisions/queue", title: "Queue choice", body: "We use the axolotl queue." },
  });
  await agent.callTool({
    name: "memory_write_page",
    arguments: {
      path: "decisions/billing",
      title: "Billing events",
      body: "Billing events go through the axolotl queue.",
      relations: { depends_on: ["decisions/queue"] },
    },
  });
  await agent.close();

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // 1. Initial JavaScript: every script the first visit (a new browser profile, the sign-in link) fetches,
  // as transferred (gzip).
  const scripts: { url: string; bytes: number }[] = [];
  const sized: Promise<void>[] = [];
  page.on("response", (response) => {
    if (response.request().resourceType() !== "script") return;
    sized.push(
      response
        .request()
        .sizes()
        .then((sizes) => {
          scripts.push({ url: new URL(response.url()).pathname, bytes: sizes.responseBodySize });
        }),
    );
  });
  await page.goto((await consoleLogin(root, "--role", "admin", "--name", "Ana")).url, {
    waitUntil: "networkidle",
  });
  await page.getByText("Signed in as Ana (admin)").waitFor();
  page.removeAllListeners("response");
  await Promise.all(sized);
  if (scripts.some((script) => script.bytes <= 0))
    throw new Error(`unsized script: ${JSON.stringify(scripts)}`);
  const jsBytes = scripts.reduce((sum, script) => sum + script.bytes, 0);

  // 2. The approvals view with `pending` requests: a fresh navigation each round; interactive = the first row is
  // shown and an ArrowDown moved the selection (the main thread answered input).
  const firstRow: number[] = [];
  const interactive: number[] = [];
  let rowsInDom = 0;
  for (let round = 0; round < rounds; round++) {
    await page.goto(`${server.url}/console/approvals`);
    const list = page.getByRole("listbox", { name: "Approval requests" });
    await list.getByRole("option").first().waitFor();
    firstRow.push(await page.evaluate<number>("performance.now()"));
    await list.focus();
    const before = await list.getAttribute("aria-activedescendant");
    await page.keyboard.press("ArrowDown");
    await page.waitForFunction(
      `document.querySelector('[role="listbox"]').getAttribute("aria-activedescendant") !== ${JSON.stringify(before)}`,
      undefined,
      { polling: "raf" },
    );
    interactive.push(await page.evaluate<number>("performance.now()"));
    rowsInDom = await list.getByRole("option").count();
  }
  const p50 = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  const max = (values: number[]) => Math.max(...values);

  if (screenshots) {
    const out = path.resolve("docs/console");
    await mkdir(out, { recursive: true });
    const shoot = async (name: string, heading: string, prepare?: () => Promise<void>) => {
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: heading }).click();
      await page.getByRole("heading", { level: 1, name: heading }).waitFor();
      await prepare?.();
      await page.waitForLoadState("networkidle");
      await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    };
    await shoot("overview", "Overview");
    await shoot("approvals", "Approvals", async () => {
      const list = page.getByRole("listbox", { name: "Approval requests" });
      await list.getByRole("option", { name: /decisions\/queue/ }).click();
      await page
        .getByRole("region", { name: "Approval details" })
        .getByRole("button", { name: "Approve" })
        .waitFor();
    });
    // Approved, the pages show under Knowledge.
    const details = page.getByRole("region", { name: "Approval details" });
    for (const target of [/decisions\/queue/, /decisions\/billing/]) {
      await page
        .getByRole("listbox", { name: "Approval requests" })
        .getByRole("option", { name: target })
        .click();
      await details.getByRole("heading", { name: target }).waitFor();
      await details.getByRole("button", { name: "Approve" }).click();
      await details
        .getByRole("status")
        .filter({ hasText: /^Applied\./ })
        .waitFor();
    }
    await shoot("activity", "Activity");
    await shoot("knowledge", "Knowledge", async () => {
      await page.getByLabel("Search documents").fill("billing retries");
      await page.getByRole("button", { name: "Search" }).click();
      await page.getByText("Billing retries").first().waitFor();
      await page.getByRole("link", { name: "Billing events" }).click();
      await page.getByRole("region", { name: "Page details" }).waitFor();
    });
    await shoot("clients", "Clients");
  }

  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  const ms = (value: number) => value.toFixed(0);
  const lines = [
    "# web console",
    "",
    `${machineLine()}, Chromium (Debian) headless, ${new Date().toISOString()}.`,
    "",
    "Against the built server over loopback, signed in as an admin. Budgets from issue 14.",
    "",
    "| figure | measured | budget |",
    "|---|---|---|",
    `| initial JavaScript, gzipped as transferred (${scripts.length} file${scripts.length === 1 ? "" : "s"}) | **${kb(jsBytes)}** | ≤ ${kb(JS_BUDGET)} |`,
    `| approvals view, ${pending.toLocaleString("en")} pending: first row shown, p50 / max of ${rounds} | **${ms(p50(firstRow))} ms** / ${ms(max(firstRow))} ms | |`,
    `| approvals view, ${pending.toLocaleString("en")} pending: interactive (first row + ArrowDown answered), p50 / max | **${ms(p50(interactive))} ms** / ${ms(max(interactive))} ms | ≤ ${INTERACTIVE_BUDGET_MS} ms |`,
    `| request rows in the DOM (virtualised) | ${rowsInDom} | |`,
    "",
    "Times are from the navigation's start (the page's own clock): they include fetching the page, its",
    "script, the session, the counts and the first 200-request page of the paginated API.",
    "",
  ];
  const report = lines.join("\n");
  process.stdout.write(report);
  await mkdir("bench/results", { recursive: true });
  await writeFile("bench/results/console.md", report);
  if (jsBytes > JS_BUDGET || p50(interactive) > INTERACTIVE_BUDGET_MS) {
    process.stderr.write("over budget\n");
    process.exitCode = 1;
  }
} finally {
  await browser.close();
  await server.stop();
  await cleanup();
}
