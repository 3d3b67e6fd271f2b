// Hybrid retrieval with the TEI embedder against a fake TEI server that honours POST /embed.
import { readdir, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveServerConfig, serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { createEmbedder } from "../src/server/context/embedder.js";
import { openCatalogue, openContextService } from "../src/server/context/service.js";
import { silentLogger } from "../src/shared/logger.js";
import { contextTree, writeTree } from "./context-helpers.js";
import { tempDir } from "./helpers.js";
import { createThrowawayDatabase } from "./postgres.js";

/** Concepts the fake model "understands": words of one concept land on the same axis. */
const CONCEPTS = [
  ["car", "automobile", "vehicle"],
  ["holiday", "vacation", "leave"],
  ["invoice", "billing"],
  ["engine", "motor"],
];
const DIMS = 8;

function fakeEmbedding(text: string): number[] {
  const vector = new Array(DIMS).fill(0.01);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    CONCEPTS.forEach((concept, axis) => {
      if (concept.includes(word)) vector[axis] += 1;
    });
  }
  return vector;
}

describe("hybrid retrieval with a TEI embedder", () => {
  let tei: http.Server;
  let url: string;
  const requests: { inputs: string[] }[] = [];

  beforeAll(async () => {
    tei = http.createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/embed") {
          res.writeHead(404).end();
          return;
        }
        const parsed = JSON.parse(body) as { inputs: string[] };
        requests.push(parsed);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(parsed.inputs.map(fakeEmbedding)));
      });
    });
    await new Promise<void>((resolve) => tei.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(tei.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => tei.close(() => resolve())));

  it("finds a passage by meaning, keeps a vector cache named by model and dims, and applies E5 prefixes", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    try {
      await writeTree(source.dir, {
        "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
        "people.md": "# People\n\nVacation requests go through the portal.",
        "money.md": "# Money\n\nInvoice disputes are handled by finance.",
      });
      const paths = serverPaths(made.root);
      const config = serverConfigSchema.parse({
        server: { public_url: "http://127.0.0.1:1" },
        context: { embedder: { provider: "tei", url, model: "intfloat/multilingual-e5-small", dims: DIMS } },
      });
      const context = openContextService({ paths, config, logger: silentLogger });
      try {
        await context.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await context.ingest([]);
        expect(
          requests.flatMap((request) => request.inputs).every((input) => input.startsWith("passage: ")),
        ).toBe(true);
        const hits = await context.searcher.search("car", { limit: 3 });
        expect(hits[0]?.document.rel_path).toBe("fleet.md");
        expect(requests.at(-1)?.inputs).toEqual(["query: car"]);
        const files = await readdir(path.join(paths.contextDir, "vectors"));
        expect(files).toEqual(["ivoai-context-v1-multilingual-e5-small-d8.bin"]);
      } finally {
        await context.close();
      }
      // The cache is reused: a new process embeds only the query.
      const before = requests.length;
      const again = openContextService({ paths, config, logger: silentLogger });
      try {
        expect((await again.searcher.search("holiday", { limit: 1 }))[0]?.document.rel_path).toBe(
          "people.md",
        );
        expect(requests.slice(before).flatMap((request) => request.inputs)).toEqual(["query: holiday"]);
      } finally {
        await again.close();
      }
      // A vector ranking weighed 0 is not computed: no query goes to the embedder.
      const unweighted = openContextService({
        paths,
        config: {
          ...config,
          context: { ...config.context, fusion: { ...config.context.fusion, vector_weight: 0 } },
        },
        logger: silentLogger,
      });
      try {
        const asked = requests.length;
        expect((await unweighted.searcher.search("vacation", { limit: 1 }))[0]?.document.rel_path).toBe(
          "people.md",
        );
        expect(requests.length).toBe(asked);
      } finally {
        await unweighted.close();
      }
    } finally {
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("shares embeddings through PostgreSQL: a replica loads what another embedded, and never re-embeds it", async () => {
    const made = await contextTree();
    const source = await tempDir("ivoai-docs-");
    const database = await createThrowawayDatabase();
    try {
      await writeTree(source.dir, {
        "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
        "money.md": "# Money\n\nInvoice disputes are handled by finance.",
      });
      const paths = serverPaths(made.root);
      await writeFile(path.join(paths.secretsDir, "postgres.url"), `${database.url}\n`, { mode: 0o600 });
      const config = serverConfigSchema.parse({
        server: { public_url: "http://127.0.0.1:1" },
        store: { backend: "postgres" },
        context: {
          embedder: { provider: "tei", url, model: "intfloat/multilingual-e5-small", dims: DIMS },
        },
      });
      await saveServerConfig(paths.configFile, config);
      const open = async () =>
        openContextService({ paths, config, logger: silentLogger, catalogue: await openCatalogue(paths) });
      const ingester = await open();
      const replica = await open();
      try {
        // The replica has an (empty) vector index before anything is ingested.
        expect(await replica.searcher.search("car", { limit: 3 })).toEqual([]);
        const before = requests.length;
        await ingester.addConnector({ name: "docs", type: "filesystem", path: source.dir });
        await ingester.ingest([]);
        const embedded = requests.slice(before).flatMap((request) => request.inputs);
        expect(embedded.filter((input) => input.startsWith("passage: "))).toHaveLength(2);
        const after = requests.length;
        expect((await replica.searcher.search("vehicle", { limit: 3 }))[0]?.document.rel_path).toBe(
          "fleet.md",
        );
        expect(requests.slice(after).flatMap((request) => request.inputs)).toEqual(["query: vehicle"]);
        // Nothing in the cache folder: the vectors live in PostgreSQL.
        await expect(readdir(path.join(paths.contextDir, "vectors"))).rejects.toThrow(/ENOENT/);
      } finally {
        await Promise.all([ingester.close(), replica.close()]);
      }
    } finally {
      await database.drop();
      await made.cleanup();
      await source.cleanup();
    }
  });

  it("reports an unreachable TEI service clearly", async () => {
    const config = serverConfigSchema.parse({
      server: { public_url: "http://127.0.0.1:1" },
      context: { embedder: { provider: "tei", url: "http://127.0.0.1:9", model: "m", dims: 4 } },
    });
    const down = createEmbedder(config.context.embedder);
    await expect(down?.embed(["x"], "query")).rejects.toThrow(/unreachable/);
    expect(createEmbedder({ provider: "none" })).toBeUndefined();
  });
});
