// Real headless Chromium (Debian's /usr/bin/chromium) driven by playwright-core, for the web console's tests
// and budgets; axe-core is injected from node_modules into the page under test.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Chromium is: IVOAI_CHROMIUM, else Debian's package. */
export const CHROMIUM = process.env.IVOAI_CHROMIUM ?? "/usr/bin/chromium";

/**
 * The flags this machine needs: no sandbox as root, and no background networking (a closed network refuses
 * Chromium's own connections, many at a time).
 */
const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core on the page as it is now and returns the serious and critical violations. The script is added
 * through the DevTools protocol (addScriptTag would be refused by the page's CSP, as it should be).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  const session = await page.context().newCDPSession(page);
  await session.send("Runtime.evaluate", { expression: axeSource });
  const { result } = await session.send("Runtime.evaluate", {
    expression: `axe.run(document, { resultTypes: ["violations"] }).then((r) => JSON.stringify(r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }))))`,
    awaitPromise: true,
    returnByValue: true,
  });
  await session.detach();
  const violations = JSON.parse(String(result.value)) as AxeViolation[];
  return violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
}
