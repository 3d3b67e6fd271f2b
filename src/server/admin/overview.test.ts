// The overview lists every connector's last ingest, newest first, on a real SQLite catalogue.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import type { LastIngest, Overview } from "../../protocol/console-api.js";
import { openSqliteCatalogue, type SqliteCatalogue } from "../context/catalogue.js";
import type { ContextService } from "../context/service.js";
import type { EnrollmentService } from "../enrollment/service.js";
import type { GatewayEnv } from "../http/env.js";
import { createOverviewRoutes } from "./overview.js";

const summary = (at: string, added: number): LastIngest => ({
  at,
  added,
  updated: 0,
  unchanged: 0,
  removed: 0,
  skipped: 0,
  skipped_by_reason: {},
  skipped_examples: [],
  complete: true,
});

describe("GET /overview", () => {
  let dir: string | undefined;
  let catalogue: SqliteCatalogue | undefined;
  afterEach(async () => {
    await catalogue?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lists every connector's last ingest, newest first, and keeps last_ingest as the newest", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-overview-"));
    catalogue = openSqliteCatalogue(path.join(dir, "catalogue.sqlite"));
    for (const name of ["docs", "notes", "wiki"]) {
      await catalogue.addConnector({
        name,
        type: "filesystem",
        path: `/srv/${name}`,
        created_at: "2026-12-01T00:00:00.000Z",
        last_ingest_at: null,
        allow_hardlinks: false,
        last_ingest: null,
      });
    }
    await catalogue.recordIngestSummary("docs", summary("2026-12-01T10:00:00.000Z", 1));
    await catalogue.recordIngestSummary("notes", summary("2026-12-01T12:00:00.000Z", 2));
    // "wiki" never ingested: it has nothing to show and is left out.

    const app = new Hono<GatewayEnv>();
    app.use(async (c, next) => {
      c.set("client", { id: "cli_test", name: "test", scopes: ["status:read"] });
      await next();
    });
    const open = catalogue;
    // Only the parts the overview reads: listClients, and the context service's catalogue.
    const enrollment = { listClients: async () => [] } as unknown as EnrollmentService;
    const context = { catalogue: open } as unknown as ContextService;
    app.route(
      "/",
      createOverviewRoutes({
        enrollment,
        readiness: [],
        context,
        startedAt: new Date("2026-12-01T00:00:00.000Z"),
        now: () => new Date("2026-12-01T13:00:00.000Z"),
      }),
    );
    const response = await app.request("/overview");
    expect(response.status).toBe(200);
    const body = (await response.json()) as Overview;
    expect(body.ingests.map((ingest) => [ingest.connector, ingest.added])).toEqual([
      ["notes", 2],
      ["docs", 1],
    ]);
    expect(body.last_ingest).toMatchObject({ connector: "notes", added: 2 });
  });
});
