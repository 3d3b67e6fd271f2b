import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseServerConfig } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import { sqliteFileOf } from "../store/backend.js";
import { type Migration, migrate } from "../store/migrations.js";
import { openSqliteSql } from "../store/sqlite.js";
import { type DoctorStore, runServerDoctor } from "./doctor.js";

const EVENTS: readonly Migration[] = [
  { version: 1, name: "events", up: "CREATE TABLE events (id INTEGER PRIMARY KEY)" },
  { version: 2, name: "kinds", up: "ALTER TABLE events ADD COLUMN kind TEXT" },
];

describe("server doctor: store schemas", () => {
  const root = mkdtempSync(path.join(tmpdir(), "ivoai-doctor-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const paths = serverPaths(root);
  const config = parseServerConfig('[server]\npublic_url = "http://127.0.0.1:8787"\n', paths.configFile);

  const schemaCheck = async (stores: readonly DoctorStore[]) => {
    const checks = await runServerDoctor({
      paths,
      config,
      listenerMode: "loopback",
      now: new Date(),
      stores,
    });
    return checks.find((check) => check.name === "store_schema");
  };

  it("judges each store of the list it is given as a start would", async () => {
    mkdirSync(paths.auditDir, { recursive: true });
    const db = openSqliteSql(sqliteFileOf(paths, "audit"));
    await migrate(db, "audit", EVENTS.slice(0, 1)).finally(() => db.close());

    expect(
      await schemaCheck([
        { domain: "audit", migrations: EVENTS },
        { domain: "console", migrations: EVENTS },
      ]),
    ).toEqual({
      name: "store_schema",
      status: "ok",
      detail: "audit at version 1 of 2 (migrated at the next start); console no schema recorded yet",
    });
    expect(await schemaCheck([{ domain: "audit", migrations: EVENTS.slice(0, 1) }])).toMatchObject({
      status: "ok",
      detail: "audit at version 1",
    });
    // The two a start refuses: a released migration edited, and a database newer than this build.
    const edited = [
      { ...(EVENTS[0] as Migration), up: "CREATE TABLE events (id INTEGER PRIMARY KEY) -- new" },
    ];
    expect(await schemaCheck([{ domain: "audit", migrations: edited }])).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/^audit migration 1 differs from the one applied/),
    });
    expect(await schemaCheck([{ domain: "audit", migrations: [] }])).toMatchObject({
      status: "fail",
      detail: expect.stringMatching(/^audit at version 1, newer than this ivoai \(0\)/),
    });
  });
});
