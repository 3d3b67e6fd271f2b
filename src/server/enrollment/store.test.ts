import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { saveServerConfig, serverConfigSchema } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import { openSqlite, type SqliteDatabase } from "../../shared/native-sqlite.js";
import { sqliteFileOf } from "../store/backend.js";
import { openSqliteSql } from "../store/sqlite.js";
import type { EnrollmentState } from "./state.js";
import { type EnrollmentStore, openEnrollmentStore, openServerEnrollmentStore } from "./store.js";

describe("enrollment store (SQLite)", () => {
  let dir: string;
  let file: string;
  let store: EnrollmentStore;
  let other: SqliteDatabase | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-enroll-store-"));
    file = path.join(dir, "enrollment.sqlite");
    store = await openEnrollmentStore({ db: openSqliteSql(file) });
  });
  afterEach(async () => {
    other?.close();
    other = undefined;
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  function stateText(name: string, revokedAt: string | null): string {
    const state: EnrollmentState = {
      version: 1,
      enrollments: [],
      clients: [
        {
          id: "cli_1",
          name,
          credential_sha256: "a".repeat(64),
          scopes: ["context:read"],
          created_at: "2026-01-01T00:00:00.000Z",
          enrollment_id: "enr_1",
          revoked_at: revokedAt,
        },
      ],
    };
    return JSON.stringify(state);
  }

  /** Writes the document through another connection, as another process would (bumping the version). */
  function writeElsewhere(doc: string): void {
    other ??= openSqlite(file);
    other.prepare("UPDATE enrollment_state SET doc = ?, version = version + 1 WHERE id = 1").run(doc);
  }

  it("sees a state rewritten by another connection with the same size (the version moved)", async () => {
    const revoked = stateText("laptop", "2026-01-02T00:00:00.000Z");
    // The same length (the name padded), so the document's size does not tell the two apart.
    const active = stateText("laptop".padEnd(6 + revoked.length - stateText("laptop", null).length), null);
    expect(active.length).toBe(revoked.length);
    writeElsewhere(active);
    const first = await store.read();
    expect(first.clients[0]?.revoked_at).toBeNull();
    expect(await store.read()).toBe(first);
    writeElsewhere(revoked);
    expect((await store.read()).clients[0]?.revoked_at).toBe("2026-01-02T00:00:00.000Z");
  });

  it("refuses a corrupt document on every read, naming what to do", async () => {
    await store.read();
    writeElsewhere("{ not json");
    await expect(store.read()).rejects.toMatchObject({
      code: "STATE_CORRUPT",
      message: "the enrollment store is not valid JSON; restore it from a backup",
    });
    await expect(store.mutate((state) => ({ state, result: 1 }))).rejects.toMatchObject({
      code: "STATE_CORRUPT",
    });
    await expect(store.read()).rejects.toMatchObject({ code: "STATE_CORRUPT" });
  });

  it("opens a server tree's store owner-only, importing its state.json", async () => {
    const paths = serverPaths(path.join(dir, "root"));
    await mkdir(paths.etcDir, { recursive: true });
    await mkdir(paths.enrollmentDir, { recursive: true, mode: 0o700 });
    await saveServerConfig(
      paths.configFile,
      serverConfigSchema.parse({ server: { public_url: "https://ai.example.com" } }),
    );
    await writeFile(paths.enrollmentState, stateText("laptop", null), { mode: 0o600 });
    const tree = await openServerEnrollmentStore(paths);
    try {
      expect((await tree.read()).clients.map((entry) => entry.name)).toEqual(["laptop"]);
    } finally {
      await tree.close();
    }
    expect((await stat(sqliteFileOf(paths, "enrollment"))).mode & 0o777).toBe(0o600);
    expect((await stat(`${paths.enrollmentState}.imported`)).isFile()).toBe(true);
  });
});
