// What only the SQLite backend has: audit files written before the store was versioned. The log's behaviour on
// every backend is in store.contract.test.ts.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/helpers.js";
import { openSqlite } from "../../shared/native-sqlite.js";
import { openSqliteSql } from "../store/sqlite.js";
import { openAuditLog } from "./store.js";

describe("audit log on SQLite", () => {
  let file: string;
  let cleanup: () => Promise<void>;

  beforeEach(async () => {
    const temp = await tempDir();
    cleanup = temp.cleanup;
    file = `${temp.dir}/audit.sqlite`;
  });
  afterEach(async () => cleanup());

  it("adopts a file written before versioning: its events keep their ids and new ones follow", async () => {
    const old = openSqlite(file);
    old.exec(`
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_at ON events (at);`);
    const insert = old.prepare("INSERT INTO events (at, kind, body) VALUES (?, ?, ?)");
    for (const index of [1, 2, 3]) {
      const event = { kind: "approval_decision", actor: "ana", detail: { index } };
      insert.run(`2026-01-01T10:00:0${index}.000Z`, event.kind, JSON.stringify(event));
    }
    const oldCall = {
      kind: "tool_call",
      tool: "memory_query",
      endpoint: "ivoai-memory",
      credential_id: "cli_old",
      session_id: "s_old",
      tier: "read",
      status: "FAILED",
      latency_ms: 42.3,
      tokens_consumed: 7,
      guardrail_checked: true,
    };
    insert.run("2026-01-01T10:00:04.000Z", "tool_call", JSON.stringify(oldCall));
    insert.run("2026-01-01T10:00:05.000Z", "page_expired", JSON.stringify({ kind: "page_expired" }));
    // A deleted last row: AUTOINCREMENT never hands its id out again.
    old.exec("DELETE FROM events WHERE id = 5");
    old.exec("DELETE FROM events WHERE id = 3");
    old.close();

    const audit = await openAuditLog(openSqliteSql(file), { now: () => new Date("2026-01-02T00:00:00Z") });
    try {
      await audit.record({ kind: "client_revoked", actor: "bo", detail: { id: "cli_x" } });
      const events = await audit.list({});
      expect(events.map((event) => [event.id, event.kind, event.at])).toEqual([
        [1, "approval_decision", "2026-01-01T10:00:01.000Z"],
        [2, "approval_decision", "2026-01-01T10:00:02.000Z"],
        [4, "tool_call", "2026-01-01T10:00:04.000Z"],
        [6, "client_revoked", "2026-01-02T00:00:00.000Z"],
      ]);
      expect(events[0]).toMatchObject({ actor: "ana", detail: { index: 1 } });
      expect(events[2]).toEqual({ ...oldCall, id: 4, at: "2026-01-01T10:00:04.000Z" });
      // The activity view counts the calls recorded before the upgrade.
      const activity = await audit.activity({
        since: new Date("2026-01-01T10:00:00Z"),
        until: new Date("2026-01-01T11:00:00Z"),
        bucket: "hour",
      });
      expect(activity.totals).toEqual({ calls: 1, errors: 1, p50_ms: 42.3, p95_ms: 42.3, tokens: 7 });
      expect(activity.by_session.map((entry) => entry.key)).toEqual(["s_old"]);
    } finally {
      await audit.close();
    }
    const check = openSqlite(file, { readonly: true });
    try {
      expect(check.prepare("SELECT store, version, name FROM schema_migrations").all()).toEqual([
        { store: "audit", version: 1, name: "events" },
        { store: "audit", version: 2, name: "tool call columns" },
        { store: "audit", version: 3, name: "credential and session indexes" },
      ]);
    } finally {
      check.close();
    }
  });
});
