// Manual check of the built console (dist/console) without a gateway: serves it under the strict CSP with a fake
// API (N pending approvals, hostile agent text), drives every view in headless Chromium, runs axe-core on each and
// writes screenshots. Usage: npx vite build --config web/vite.config.ts && node web/scripts/browser-check.mjs
// (CHROMIUM=/path/to/chromium, N=10000, OUT=/tmp/console-check). Exits 1 on any axe violation or page error.

import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { extname, join } from "node:path";

const root = new URL("../../", import.meta.url).pathname;
const require = createRequire(join(root, "package.json"));
const { chromium } = require("playwright-core");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const dist = join(root, "dist/console");
const out = process.env.OUT ?? "/tmp/console-check";
mkdirSync(out, { recursive: true });
let failures = 0;
const N = Number(process.env.N ?? 10000);
const now = Date.now();
const approvals = Array.from({ length: N }, (_, i) => ({
  id: `apr_${i}`,
  status: "pending",
  tool: "memory_write_page",
  action: "write_page",
  scope: "team",
  path: `notes/p${i}.md`,
  requester: `agent-${i % 5}`,
  session_id: `ses_${i % 7}`,
  summary: `Update <b>page</b> ${i}`,
  created_at: new Date(now - i * 1000).toISOString(),
  expires_at: new Date(now + 3600e3).toISOString(),
  decided_by: null,
  decided_at: null,
  diff_bytes: 10,
  payload_bytes: 10,
}));
const session = {
  name: "Ana",
  role: process.env.ROLE ?? "admin",
  scopes: [
    "status:read",
    "approvals:read",
    "approvals:decide",
    "audit:read",
    "clients:read",
    "clients:revoke",
    "memory:read",
    "context:read",
    "connector:read",
  ],
  csrf_token: "t",
  expires_at: new Date(now + 3600e3).toISOString(),
  idle_expires_at: new Date(now + 3600e3).toISOString(),
};
const fig = (c) => ({ calls: c, errors: Math.floor(c / 5), p50_ms: 12, p95_ms: 80, tokens: c * 100 });
const api = {
  "/v1/console/session": session,
  "/v1/admin/overview": {
    server_version: "0.1.0",
    protocol_version: "2025-06-18",
    started_at: new Date(now - 5e6).toISOString(),
    uptime_seconds: 5000,
    ready: { status: "degraded", degraded: ["embeddings"], failed: [] },
    counts: {
      clients_active: 2,
      oauth_clients_active: 1,
      documents: 40,
      chunks: 400,
      pages: 12,
      pending_approvals: N,
    },
    last_ingest: {
      connector: "docs",
      at: new Date().toISOString(),
      added: 3,
      updated: 1,
      unchanged: 30,
      removed: 0,
      skipped: 2,
      skipped_by_reason: { binary: 2 },
      skipped_examples: [{ path: "a.png", reason: "binary" }],
      complete: true,
    },
  },
  "/v1/approvals/counts": { pending: N, applied: 3, rejected: 1, expired: 0, conflict: 0 },
  "/v1/audit/activity": {
    since: "",
    until: "",
    bucket: "hour",
    totals: fig(240),
    series: Array.from({ length: 24 }, (_, i) => ({
      ...fig(i * 2),
      start: new Date(now - (24 - i) * 3600e3).toISOString(),
    })),
    by_tool: [{ key: "context_search", ...fig(200) }],
    by_credential: [{ key: "cli_abc", ...fig(240) }],
    by_session: [{ key: "ses_1", ...fig(240) }],
  },
  "/v1/audit/sessions/ses_1/timeline": {
    session_id: "ses_1",
    as_of: new Date().toISOString(),
    events: [
      {
        id: "evt_1",
        kind: "decision",
        project: "p",
        recorded_at: new Date().toISOString(),
        valid_from: null,
        valid_to: null,
        data: { note: "<script>x</script>" },
      },
    ],
  },
  "/v1/admin/connectors": {
    connectors: [
      {
        name: "docs",
        type: "filesystem",
        path: "/srv/docs",
        created_at: new Date().toISOString(),
        last_ingest_at: new Date().toISOString(),
        documents: 40,
        last_ingest: {
          at: new Date().toISOString(),
          added: 3,
          updated: 1,
          unchanged: 30,
          removed: 0,
          skipped: 2,
          skipped_by_reason: { binary: 2 },
          skipped_examples: [{ path: "a.png", reason: "binary" }],
          complete: true,
        },
      },
    ],
  },
  "/v1/context/search": {
    query: "x",
    count: 1,
    untrusted: true,
    results: [
      {
        document_id: "d1",
        source: "docs",
        path: "a.md",
        title: "<img src=x onerror=alert(1)>",
        chunk_index: 0,
        score: 0.5,
        snippet: "<script>alert(1)</script>",
      },
    ],
  },
  "/v1/memory/pages": {
    pages: [
      {
        scope: "team",
        path: "a.md",
        title: "<script>alert(1)</script>",
        version: 2,
        updated_at: new Date().toISOString(),
        author: "agent",
        tags: [],
        feedback: { stale: 1, wrong: 0, helpful: 2, not_helpful: 0 },
        flagged: true,
      },
      {
        scope: "team",
        path: "b.md",
        title: "Page B",
        version: 1,
        updated_at: new Date().toISOString(),
        author: "agent",
        tags: [],
        feedback: {},
        flagged: false,
      },
    ],
    next_cursor: null,
  },
  "/v1/memory/page": {
    page: {
      scope: "team",
      path: "a.md",
      title: "<script>alert(1)</script>",
      version: 2,
      updated_at: new Date().toISOString(),
      author: "agent",
      tags: [],
      feedback: { stale: 1, wrong: 0, helpful: 2, not_helpful: 0 },
      flagged: true,
      body: "Body <b>bold</b>",
      relations: {},
      expires_at: null,
      created_at: new Date().toISOString(),
    },
    versions: [{ version: 2, title: "t", author: "a", at: new Date().toISOString() }],
    backlinks: [{ from: "b.md", type: "related" }],
  },
  "/v1/memory/graph": {
    center: { scope: "team", path: "a.md" },
    nodes: [
      { scope: "team", path: "a.md", title: "A", missing: false },
      { scope: "team", path: "b.md", title: "Page B", missing: false },
      { scope: "team", path: "c.md", title: "C", missing: true },
    ],
    edges: [
      { from: "a.md", to: "b.md", type: "related" },
      { from: "a.md", to: "c.md", type: "related" },
    ],
  },
  "/v1/admin/clients": {
    clients: [
      {
        id: "cli_1",
        name: "laptop",
        scopes: ["context:read"],
        created_at: new Date().toISOString(),
        enrollment_id: "e1",
        revoked_at: null,
      },
    ],
  },
  "/v1/admin/oauth-clients": {
    clients: [
      {
        client_id: "oc_1",
        client_name: "Claude",
        redirect_uris: ["https://x/cb"],
        created_at: new Date().toISOString(),
        revoked_at: null,
        grants: [
          {
            id: "gr_1",
            scopes: ["context:read"],
            resource: "r",
            created_at: new Date().toISOString(),
            expires_at: new Date(now + 1e7).toISOString(),
            revoked_at: null,
            last_refreshed_at: null,
          },
        ],
      },
    ],
  },
};
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'";
let signedIn = false;
let expiredOnce = false;
const server = createServer((req, res) => {
  const url = new URL(req.url, "http://x");
  const send = (status, body, type = "application/json") => {
    res.writeHead(status, { "content-type": type, "content-security-policy": csp });
    res.end(body);
  };
  if (url.pathname === "/v1/console/session") {
    if (req.method === "POST") {
      signedIn = true;
      return send(200, JSON.stringify(session));
    }
    if (!signedIn)
      return send(
        401,
        JSON.stringify({ error: expiredOnce ? "session_expired" : "unauthorized", message: "Sign in." }),
      );
  }
  if (url.pathname.startsWith("/v1/") && !signedIn)
    return send(401, JSON.stringify({ error: "session_expired", message: "Expired." }));
  if (url.pathname.startsWith("/v1/")) {
    if (url.pathname === "/v1/approvals") {
      const start = Number(url.searchParams.get("cursor") ?? 0);
      const limit = Number(url.searchParams.get("limit"));
      return send(
        200,
        JSON.stringify({
          approvals: approvals.slice(start, start + limit),
          next_cursor: start + limit < N ? String(start + limit) : null,
        }),
      );
    }
    const m = /^\/v1\/approvals\/(apr_\d+)$/.exec(url.pathname);
    if (m) {
      const a = approvals.find((x) => x.id === m[1]);
      return send(
        200,
        JSON.stringify({
          ...a,
          diff: "--- a\n+++ b\n@@ -1 +1 @@\n-<script>alert(1)</script>\n+<img src=x onerror=alert(1)>",
          payload: {},
          base_version: 1,
          reason: null,
        }),
      );
    }
    const body = api[url.pathname];
    return body
      ? send(200, JSON.stringify(body))
      : send(404, JSON.stringify({ error: "not_found", message: "no" }));
  }
  let file = join(dist, url.pathname.replace(/^\/console\/?/, ""));
  if (!existsSync(file) || !extname(file)) file = join(dist, "index.html");
  const type =
    { ".js": "text/javascript", ".css": "text/css", ".html": "text/html" }[extname(file)] ??
    "application/octet-stream";
  send(200, readFileSync(file), type);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox"],
});
const page = await browser.newPage();
const problems = [];
page.on("console", (m) => {
  if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
});
page.on("pageerror", (e) => {
  problems.push(String(e));
  failures += 1;
});
page.on("dialog", (d) => {
  problems.push(`DIALOG ${d.message()}`);
  failures += 1;
  void d.dismiss();
});
async function axe(name) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
  for (const v of result.violations)
    console.log(
      `[${name}] ${v.impact} ${v.id}: ${v.help} — ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.join(" "))
        .join(" | ")}`,
    );
  console.log(`[${name}] ${result.violations.length} violations`);
  failures += result.violations.length;
}
await page.goto(`${base}/console/`);
await page.getByLabel("Sign-in code").waitFor();
await axe("sign-in");
await page.screenshot({ path: `${out}/sign-in.png` });
await page.getByLabel("Sign-in code").fill("ivoai_con_x");
await page.getByRole("button", { name: "Sign in" }).click();
await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
console.log("title:", await page.title());
await page.keyboard.press("Tab");
console.log("first tab:", await page.evaluate(() => document.activeElement?.textContent));
await page.keyboard.press("Enter");
console.log("after skip:", await page.evaluate(() => document.activeElement?.id), page.url());
await page.keyboard.press("Tab");
console.log("next tab:", await page.evaluate(() => document.activeElement?.textContent?.slice(0, 40)));
const t0 = Date.now();
await page.goto(`${base}/console/approvals`);
const lb = page.getByRole("listbox", { name: "Approval requests" });
await lb.getByRole("option").first().waitFor();
console.log(
  `approvals with ${N} pending: first row in ${Date.now() - t0} ms; options in DOM: ${await lb.getByRole("option").count()}`,
);
await page.getByRole("listbox", { name: "Approval requests" }).focus();
await page.keyboard.press("ArrowDown");
await page.keyboard.press("j");
await page.keyboard.press("Enter");
await page
  .getByRole("region", { name: "Approval details" })
  .getByRole("button", { name: "Approve" })
  .waitFor();
console.log("focused:", await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 80)));
await axe("approvals");
await page.screenshot({ path: `${out}/approvals.png`, fullPage: true });
for (const [name, path] of [
  ["overview", "/console/"],
  ["activity", "/console/activity"],
  ["knowledge", "/console/knowledge?scope=team&path=a.md"],
  ["clients", "/console/clients"],
]) {
  await page.goto(base + path);
  await page.getByRole("heading", { level: 1 }).waitFor();
  await page.waitForLoadState("networkidle");
  if (name === "activity") {
    await page.getByRole("button", { name: "Show table" }).click();
    await page.getByRole("button", { name: "ses_1" }).click();
    await page.getByLabel("As of").waitFor();
    await page.waitForLoadState("networkidle");
  }
  if (name === "knowledge") {
    await page.getByLabel("Search documents").fill("x");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForLoadState("networkidle");
  }
  if (name === "clients") {
    await page.getByRole("button", { name: "Revoke laptop" }).click();
    await page.getByRole("button", { name: "Confirm revoke" }).waitFor();
  }
  await axe(name);
  await page.screenshot({ path: `${out}/${name}.png`, fullPage: true });
}
signedIn = false;
expiredOnce = true;
await page.goto(`${base}/console/approvals`);
await page.getByRole("status").filter({ hasText: "session ended" }).waitFor();
await axe("expired");
await page.goto(`${base}/console/#code=ivoai_con_abc`);
await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
console.log("after code url:", page.url());
console.log("problems:", problems);
await browser.close();
server.close();
process.exitCode = failures > 0 ? 1 : 0;
