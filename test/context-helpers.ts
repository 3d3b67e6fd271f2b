// Server trees with a context service for tests: init under a temp root, open in process.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import { loadServerConfig } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { type ContextService, openContextService } from "../src/server/context/service.js";
import { initServer } from "../src/server/init.js";
import { silentLogger } from "../src/shared/logger.js";
import { tempDir } from "./helpers.js";

export async function contextTree(): Promise<{
  root: string;
  open(): Promise<ContextService>;
  cleanup(): Promise<void>;
}> {
  const { dir, cleanup } = await tempDir("ivoai-context-");
  await initServer({ root: dir, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
  const paths = serverPaths(dir);
  return {
    root: dir,
    open: async () =>
      openContextService({ paths, config: await loadServerConfig(paths.configFile), logger: silentLogger }),
    cleanup,
  };
}

/** Writes `files` (relative path → content) under `dir`. */
export async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [relPath, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, relPath)), { recursive: true });
    await writeFile(path.join(dir, relPath), content);
  }
}

/**
 * An empty server root and a documents folder holding `files`, both removed by the cleanups this pushes (the
 * caller runs them after its tests).
 */
export async function rootAndDocs(
  files: Record<string, string | Buffer>,
  cleanups: (() => Promise<void>)[],
): Promise<{ root: string; docs: string }> {
  const made = await tempDir();
  const source = await tempDir("ivoai-docs-");
  cleanups.push(made.cleanup, source.cleanup);
  await writeTree(source.dir, files);
  return { root: made.dir, docs: source.dir };
}

/** The catalogue as content (documents, chunk ids, texts and terms), without timestamps or row numbers. */
export function catalogueSnapshot(root: string): string {
  const db = new Database(path.join(root, "var/lib/ivoai/context/catalogue.sqlite"), { readonly: true });
  try {
    const docs = db
      .prepare(
        "SELECT id, connector, rel_path, title, language, fingerprint, bytes FROM documents ORDER BY id",
      )
      .all();
    const chunks = db
      .prepare(
        "SELECT d.id AS doc, c.id, c.idx, c.unit_start, c.text, c.terms FROM chunks c JOIN documents d ON d.key = c.doc ORDER BY d.id, c.idx",
      )
      .all();
    return JSON.stringify({ docs, chunks });
  } finally {
    db.close();
  }
}
