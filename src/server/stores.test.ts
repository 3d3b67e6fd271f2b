import { describe, expect, it } from "vitest";
import { migrationChecksum } from "./store/migrations.js";
import { SQL_STORES } from "./stores.js";

/**
 * Every released migration's SHA-256 per dialect (first 16 hex digits). A start refuses a database whose applied
 * migration differs from this build's text; this list catches the edit before any database does. Adding a
 * migration adds its lines here; changing a line means a released migration was edited: make a new version.
 */
const RELEASED = [
  "enrollment 1 sqlite db05d1ba121f4915",
  "enrollment 1 postgres db05d1ba121f4915",
  "oauth 1 sqlite aeb01419fedeb27c",
  "oauth 1 postgres aeb01419fedeb27c",
  "oauth 2 sqlite 22220d2bb20713e8",
  "oauth 2 postgres 43b06eeb14564111",
  "audit 1 sqlite c166509b0e47d079",
  "audit 1 postgres 9c5c5706748d3a9a",
  "audit 2 sqlite 12b54e332f72ca5c",
  "audit 2 postgres 17d9ad0aad60d267",
  "audit 3 sqlite e4a93be97b59a197",
  "audit 3 postgres e4a93be97b59a197",
  "console 1 sqlite 246be75e57aad865",
  "console 1 postgres 358ddae2eda3b095",
  "memory 1 sqlite aafbbbd60e318ffb",
  "memory 1 postgres ab353bf2cd36bffb",
  "memory 2 sqlite 46531c1782b86508",
  "memory 2 postgres e1491067acdf4441",
];

describe("the composition root's store list", () => {
  it("holds every SQL store once, with migrations numbered 1, 2, 3…", () => {
    const domains = SQL_STORES.map((store) => store.domain);
    expect(new Set(domains).size).toBe(domains.length);
    for (const store of SQL_STORES)
      expect(store.migrations.map((migration) => migration.version)).toEqual(
        store.migrations.map((_, index) => index + 1),
      );
  });

  it("keeps every released migration's text as it was released", () => {
    const current = SQL_STORES.filter((store) => store.domain !== "context").flatMap((store) =>
      store.migrations.flatMap((migration) =>
        (["sqlite", "postgres"] as const).map(
          (dialect) =>
            `${store.domain} ${migration.version} ${dialect} ${migrationChecksum(migration, dialect).slice(0, 16)}`,
        ),
      ),
    );
    expect(current.slice(0, RELEASED.length)).toEqual(RELEASED);
    expect(current.length).toBe(RELEASED.length);
  });
});
