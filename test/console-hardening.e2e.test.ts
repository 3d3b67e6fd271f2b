// The console under hostile or unusual conditions: activity windows at the edge of the time range, the build under any NODE_ENV.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleSession } from "./console-helpers.js";
import { initRoot, type RunningServer, startServer, tempDir } from "./helpers.js";

describe("console API review", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let server: RunningServer;
  let cookie: string;

  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-review-console-"));
    await initRoot(root);
    server = await startServer(root);
    cookie = `ivoai_console=${(await consoleSession(server.url, root, "--role", "viewer")).token}`;
  });
  afterAll(async () => {
    await server?.stop();
    await cleanup?.();
  });

  // src/server/audit/routes.ts: the default `since` is until - 1 day; for an `until` that isoTimeSchema accepts
  // (the earliest representable time) that is an Invalid Date, every check compares NaN as false, and
  // aggregateActivity's toISOString() throws: a 500 instead of a 4xx.
  it("answers an activity window at the edge of the time range with a 4xx, not a 500", async () => {
    for (const query of ["until=-271821-04-20T00:00:00Z", "until=-271821-04-20T12:00:00Z&bucket=day"]) {
      const response = await fetch(`${server.url}/v1/audit/activity?${query}`, { headers: { cookie } });
      const body = (await response.json()) as { error: string };
      expect({ query, status: response.status, error: body.error }).toMatchObject({
        status: 400,
        error: "invalid_request",
      });
    }
  });

  // scripts/build.mjs runs viteBuild() in whatever NODE_ENV the caller has. Under vitest (global-setup: NODE_ENV=test),
  // or any shell with NODE_ENV=development, the embedded console is React's development build: jsxDEV calls, ~196 KB
  // gzipped instead of ~125 KB (the budget is 200 KB), and the builder's absolute source paths served to
  // every browser. Every e2e test of the console therefore exercises a different bundle than the one that ships.
  it("embeds a production build of the console whatever NODE_ENV the build ran under", async () => {
    const html = await (await fetch(`${server.url}/console/`)).text();
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/console\/assets\/index-[\w-]+\.js$/);
    const js = await (await fetch(`${server.url}${script}`)).text();
    expect(js.includes("jsxDEV")).toBe(false);
    expect(js.includes(process.cwd())).toBe(false);
  });
});
