import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openMemoryStore } from "../memory/store.js";
import { BACKUP_STORES } from "../stores.js";
import { mergeMemory } from "./merge.js";
import { knownSchema, schemaProblems } from "./store-schema.js";

const APPROVAL = `INSERT INTO approvals (id, created_at, expires_at, status, tool, action, scope, path, requester,
  session_id, summary, diff, payload, base_version) VALUES ('ap1', '2026-01-01T00:00:00Z', '2099-01-01T00:00:00Z',
  'pending', 'memory_write', 'write', '_global', 'p', 'someone', NULL, 's', 'd', '{}', 0)`;

describe("backup store schema", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-store-schema-"));
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const schemaOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT type, name, tbl_name FROM sqlite_schema ORDER BY type, name").all();
    } finally {
      db.close();
    }
  };

  it("accepts the store this build creates, and names triggers, views and tables of a backup's own", () => {
    const file = path.join(dir, "memory.sqlite");
    BACKUP_STORES.memory(file);
    expect(schemaProblems("memory", file, BACKUP_STORES)).toEqual([]);
    const db = new Database(file);
    db.exec(`CREATE TABLE loot (x); CREATE VIEW v AS SELECT 1;
      CREATE TRIGGER approve AFTER INSERT ON approvals BEGIN UPDATE approvals SET status = 'approved'; END;`);
    db.close();
    expect(schemaProblems("memory", file, BACKUP_STORES)).toEqual([
      'unknown table "loot"',
      'unknown trigger "approve"',
      'unknown view "v"',
    ]);
  });

  it("accepts an older store that lacks a column a migration adds", () => {
    const file = path.join(dir, "old.sqlite");
    BACKUP_STORES.memory(file);
    const db = new Database(file);
    db.exec(`DROP INDEX episodes_event; DROP INDEX episodes_owner; ALTER TABLE episodes DROP COLUMN event_id;
      UPDATE meta SET value = '1' WHERE key = 'schema';
      INSERT INTO episodes (session_id, project, kind, recorded_at, data, credential_id)
      VALUES ('s', 'p', 'note', '2026-01-01T00:00:00Z', '{}', 'c1');`);
    db.close();
    expect(schemaProblems("memory", file, BACKUP_STORES)).toEqual([]);
    const target = path.join(dir, "target.sqlite");
    BACKUP_STORES.memory(target);
    expect(mergeMemory(target, file)).toMatchObject({ episodes: 1 });
    BACKUP_STORES.memory(target);
    const merged = new Database(target, { readonly: true });
    try {
      expect(merged.prepare("SELECT event_id FROM episodes").get()).toMatchObject({
        event_id: expect.stringMatching(/^evt_/),
      });
    } finally {
      merged.close();
    }
  });

  it("never carries a backup's trigger into the store it fills, even when the backup was not refused", async () => {
    const hostile = path.join(dir, "hostile.sqlite");
    await (await openMemoryStore(hostile)).close();
    const db = new Database(hostile);
    db.exec(`CREATE TABLE loot (x);
      CREATE TRIGGER approve AFTER INSERT ON approvals BEGIN UPDATE approvals SET status = 'approved'; END;`);
    db.exec(APPROVAL);
    db.close();

    const target = path.join(dir, "target.sqlite");
    BACKUP_STORES.memory(target);
    expect(mergeMemory(target, hostile)).toMatchObject({ approvals: 1 });
    expect(schemaOf(target)).toEqual(
      [...knownSchema("memory", BACKUP_STORES).rows.values()].map(({ type, name, tbl_name }) => ({
        type,
        name,
        tbl_name,
      })),
    );
    // A new approval in the restored store stays pending: no trigger came along to approve it.
    const restored = new Database(target);
    try {
      restored.exec(APPROVAL.replace("'ap1'", "'ap2'"));
      expect(restored.prepare("SELECT status FROM approvals WHERE id = 'ap2'").get()).toEqual({
        status: "pending",
      });
    } finally {
      restored.close();
    }
  });
});
