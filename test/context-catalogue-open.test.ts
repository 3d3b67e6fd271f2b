// Opening a server's catalogue is where a refused file shows: the start awaits openCatalogue, so a catalogue a
// newer ivoai migrated must reject there (saying so), not at the first search after the server is up.
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { serverPaths } from "../src/config/server-paths.js";
import { catalogueFile, openCatalogue } from "../src/server/context/service.js";
import { initServer } from "../src/server/init.js";
import { tempDir } from "./helpers.js";

describe("opening a server's catalogue", () => {
  let root: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ dir: root, cleanup } = await tempDir("ivoai-context-"));
    await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
  });
  afterEach(() => cleanup());

  it("opens and migrates the SQLite file, and rejects one a newer ivoai migrated", async () => {
    const paths = serverPaths(root);
    const catalogue = await openCatalogue(paths);
    expect(await catalogue.stats()).toEqual({ connectors: 0, documents: 0, chunks: 0, bytes: 0 });
    await catalogue.close();

    const db = new Database(catalogueFile(paths));
    db.prepare(
      "INSERT INTO schema_migrations (store, version, name, applied_at) VALUES ('context', 99, 'future', '')",
    ).run();
    db.close();
    await expect(openCatalogue(paths)).rejects.toThrow(
      /context store is at schema version 99, but this ivoai knows versions up to \d+: .*upgrade ivoai/,
    );
  });
});
