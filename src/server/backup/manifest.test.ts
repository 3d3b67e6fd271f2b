import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteCatalogue } from "../context/catalogue.js";
import { openMemoryStore } from "../memory/store.js";
import { entrySpecOf, parseManifest, SUPPORTED_SCHEMAS } from "./manifest.js";
import { storeFacts } from "./sqlite-files.js";

const manifest = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: "ivoai-backup",
    format_version: 1,
    ivoai_version: "0.1.0",
    created_at: "2026-11-30T00:00:00.000Z",
    stores: { memory: { schema: 2 } },
    entries: [{ path: "memory.sqlite", kind: "memory", size: 1, sha256: "a".repeat(64), schema: 2 }],
    ...over,
  });

describe("backup manifest", () => {
  it("accepts the allow-listed names only, and never a path that escapes or names a secret", () => {
    expect(entrySpecOf("memory.sqlite").kind).toBe("memory");
    for (const [name, why] of [
      ["../memory.sqlite", /leaves the backup/],
      ["a/../memory.sqlite", /leaves the backup/],
      ["./memory.sqlite", /leaves the backup/],
      ["/var/lib/ivoai/memory/memory.sqlite", /absolute/],
      ["a\\b", /unsafe/],
      ["secrets/tls/key.pem", /never restores secrets/],
      ["enrollment/state.json", /never restores secrets/],
      ["oauth.sqlite", /never restores secrets/],
      ["audit.sqlite", /not part of the ivoai backup format/],
    ] as const) {
      expect(() => entrySpecOf(name), name).toThrow(why);
    }
  });

  it("refuses another format version, a kind that does not fit the name, duplicates and newer schemas", () => {
    expect(parseManifest(manifest()).entries).toHaveLength(1);
    expect(() => parseManifest(manifest({ format_version: 2 }))).toThrow(/format version 2 is not supported/);
    expect(() => parseManifest("{")).toThrow(/not valid JSON/);
    const wrongKind = [{ path: "memory.sqlite", kind: "config", size: 1, sha256: "a".repeat(64) }];
    expect(() => parseManifest(manifest({ entries: wrongKind }))).toThrow(/declared as config/);
    const twice = [
      { path: "server.toml", kind: "config", size: 1, sha256: "a".repeat(64) },
      { path: "server.toml", kind: "config", size: 1, sha256: "a".repeat(64) },
    ];
    expect(() => parseManifest(manifest({ entries: twice }))).toThrow(/listed twice/);
    expect(() => parseManifest(manifest({ stores: { memory: { schema: 9 } } }))).toThrow(
      /newer than this ivoai/,
    );
  });

  it("knows the schema versions the stores write today", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "ivoai-manifest-"));
    try {
      await openSqliteCatalogue(path.join(dir, "c.sqlite")).close();
      await (await openMemoryStore(path.join(dir, "m.sqlite"))).close();
      expect(storeFacts(path.join(dir, "c.sqlite")).schema).toBe(SUPPORTED_SCHEMAS.catalogue);
      expect(storeFacts(path.join(dir, "m.sqlite")).schema).toBe(SUPPORTED_SCHEMAS.memory);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
