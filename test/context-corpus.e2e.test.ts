// The corpus embedder as an administrator meets it, through the built CLI: with provider = "corpus" in
// server.toml, `server ingest` learns the model and `server search` finds a document that has no word of the
// query, by a synonym the corpus teaches; the same documents without it (provider none) do not.
import { readFile, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { serverPaths } from "../src/config/server-paths.js";
import { writeTree } from "./context-helpers.js";
import { addDocsConnector, initRoot, runIvoai, tempDir } from "./helpers.js";
import { synonymCorpus } from "./synonym-corpus.js";

type Search = { results: { path: string }[] };

describe("hybrid retrieval with the corpus embedder, through the CLI", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /**
   * A server tree over the synonym corpus with `embedder` as its [context.embedder] table, ingested; what `server
   * search` returns. (LSA generalises only with fewer axes than the corpus has structure: 8 for these 96 words.)
   */
  async function searchWith(embedder: string, query: string): Promise<string[]> {
    const root = await tempDir("ivoai-corpus-root-");
    const docs = await tempDir("ivoai-corpus-docs-");
    cleanups.push(root.cleanup, docs.cleanup);
    await writeTree(docs.dir, synonymCorpus().files);
    await initRoot(root.dir);
    const configFile = serverPaths(root.dir).configFile;
    const toml = await readFile(configFile, "utf8");
    expect(toml).toContain('[context.embedder]\nprovider = "none"');
    await writeFile(
      configFile,
      toml.replace('[context.embedder]\nprovider = "none"', `[context.embedder]\n${embedder}`),
    );
    await addDocsConnector(root.dir, docs.dir);
    const ingest = await runIvoai(["server", "ingest", "--root", root.dir, "--json"]);
    expect(ingest.code, ingest.stderr).toBe(0);
    const search = await runIvoai(["server", "search", query, "--root", root.dir, "--limit", "24", "--json"]);
    expect(search.code, search.stderr).toBe(0);
    return (JSON.parse(search.stdout) as Search).results.map((result) => result.path);
  }

  it("finds the car document for 'automobile' only with provider = corpus", async () => {
    const { files, target } = synonymCorpus();
    expect(files[target]).not.toMatch(/automobile/i);
    const lexical = await searchWith('provider = "none"', "automobile");
    expect(lexical).toHaveLength(12);
    expect(lexical).not.toContain(target);
    const hybrid = await searchWith('provider = "corpus"\ndims = 8', "automobile");
    expect(hybrid).toContain(target);
    // The documents with the word itself still come first.
    expect(hybrid.slice(0, 12).sort()).toEqual([...lexical].sort());
  });

  it("refuses a bad corpus setting at start, naming the field", async () => {
    const root = await tempDir("ivoai-corpus-bad-");
    cleanups.push(root.cleanup);
    await initRoot(root.dir);
    const configFile = serverPaths(root.dir).configFile;
    const toml = await readFile(configFile, "utf8");
    await writeFile(configFile, toml.replace('provider = "none"', 'provider = "corpus"\ndims = 0'));
    const result = await runIvoai(["server", "search", "x", "--root", root.dir]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/context\.embedder\.dims/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});
