// `ivoai server eval` as an operator meets it: a tiny corpus ingested through the built CLI, judged queries in
// the BEIR layout, the report as text and JSON, bad flags, and a run that changes nothing but the audit log.
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rootAndDocs } from "./context-helpers.js";
import {
  addDocsConnector,
  connectMcp,
  enrolledCredential,
  initRoot,
  runIvoai,
  startServer,
} from "./helpers.js";
import { createThrowawayDatabase, usePostgres } from "./postgres.js";

const DOCS = {
  "runbooks/deploy.md":
    "# Deploying billing\n\nRun the release-billing pipeline, then watch the payments dashboard.",
  "runbooks/rollback.md":
    "# Rolling back\n\nTo roll back a release, redeploy the previous tag from the pipeline.",
  "guides/vacation.md": "# Vacation\n\nVacation requests go through the people portal thirty days ahead.",
  "guides/laptops.md": "# Laptops\n\nNew laptops are ordered from the hardware catalogue by your manager.",
};

type Backend = "sqlite" | "postgres";

/** Every row of every store but the audit log's: what a read-only command must leave exactly as it was. */
async function storeRows(root: string, backend: Backend, url: string): Promise<string> {
  const tables: Record<string, unknown[]> = {};
  if (backend === "sqlite") {
    const dataDir = path.join(root, "var/lib/ivoai");
    for (const entry of await readdir(dataDir, { recursive: true })) {
      if (!entry.endsWith(".sqlite") || entry.startsWith("audit")) continue;
      const db = new Database(path.join(dataDir, entry), { readonly: true });
      try {
        const names = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
          .all() as {
          name: string;
        }[];
        for (const { name } of names)
          tables[`${entry}:${name}`] = db.prepare(`SELECT * FROM "${name}"`).all();
      } finally {
        db.close();
      }
    }
    expect(Object.keys(tables)).toContain("context/catalogue.sqlite:chunks");
    return JSON.stringify(tables);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ schema: string; name: string }>(
      "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_schema LIKE 'ivoai_%' AND table_schema <> 'ivoai_audit' ORDER BY 1, 2",
    );
    for (const { schema, name } of rows)
      tables[`${schema}.${name}`] = (await client.query(`SELECT * FROM ${schema}."${name}" ORDER BY 1`)).rows;
    expect(Object.keys(tables)).toContain("ivoai_context.chunks");
    return JSON.stringify(tables);
  } finally {
    await client.end();
  }
}

describe.each<Backend>(["sqlite", "postgres"])("server eval end to end on %s", (backend) => {
  let root: string;
  let pgUrl = "";
  let queries: string;
  let qrels: string;
  const cleanups: (() => Promise<void>)[] = [];
  const evalArgs = (...extra: string[]) => [
    "server",
    "eval",
    "--root",
    root,
    "--queries",
    queries,
    "--qrels",
    qrels,
    ...extra,
  ];

  beforeAll(async () => {
    const made = await rootAndDocs(DOCS, cleanups);
    root = made.root;
    await initRoot(root);
    if (backend === "postgres") {
      const db = await createThrowawayDatabase();
      cleanups.push(() => db.drop());
      pgUrl = db.url;
      await usePostgres(root, pgUrl);
    }
    await addDocsConnector(root, made.docs);
    expect((await runIvoai(["server", "ingest", "--root", root])).code).toBe(0);
    queries = path.join(root, "queries.jsonl");
    qrels = path.join(root, "qrels.tsv");
    await writeFile(
      queries,
      [
        { _id: "q1", text: "vacation requests portal" },
        { _id: "q2", text: "laptops hardware catalogue" },
        // Judged relevant: the rollback page, which shares no word with the query (lexical misses it).
        { _id: "q3", text: "undo a bad change" },
        { _id: "q4", text: "a query nobody judged" },
      ]
        .map((q) => JSON.stringify(q))
        .join("\n"),
    );
    // Corpus ids in each form eval accepts: CONNECTOR:PATH, PATH less its extension, the file's stem.
    await writeFile(
      qrels,
      "query-id\tcorpus-id\tscore\nq1\tdocs:guides/vacation.md\t2\nq2\tguides/laptops\t1\nq3\trollback\t1\n",
    );
  });

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("reports nDCG@10, recall@k and MRR with intervals, as JSON with a schema", async () => {
    const result = await runIvoai(evalArgs("--json", "--k", "5"));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      schema: "ivoai.eval/v1",
      source: "qrels",
      k: 5,
      queries: 3,
      judged_documents: 3,
      judged_documents_retrieved: 2,
      bootstrap: { resamples: 2000, seed: 1, confidence: 0.95 },
      differences: [],
    });
    expect(report.methods).toHaveLength(1);
    const [lexical] = report.methods;
    expect(lexical.method).toBe("lexical");
    // Two queries found their document first, one found nothing: every metric's mean is 2/3.
    for (const metric of ["ndcg10", "recall", "mrr10"]) {
      expect(lexical[metric].mean).toBeCloseTo(2 / 3, 10);
      expect(lexical[metric].low).toBeLessThanOrEqual(lexical[metric].mean);
      expect(lexical[metric].high).toBeGreaterThanOrEqual(lexical[metric].mean);
    }
    // Asked for, progress goes to stderr and leaves stdout the same document.
    const shown = await runIvoai(evalArgs("--json", "--k", "5", "--progress"));
    expect(shown.stderr).toContain("eval: 1/3 queries");
    expect(shown.stdout).toBe(result.stdout);
    // The same input prints the same report.
    expect((await runIvoai(evalArgs("--json", "--k", "5"))).stdout).toBe(result.stdout);
  });

  it("prints a table a person can read", async () => {
    const result = await runIvoai(evalArgs());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("3 queries (qrels), 3 judged documents");
    expect(result.stdout).toMatch(/METHOD\s+nDCG@10\s+RECALL@10\s+MRR@10/);
    expect(result.stdout).toMatch(/lexical\s+0\.667 \[0\.\d{3}, 1\.000\]/);
  });

  it("refuses bad flags with exit 2 and a method it cannot run with a clear error", async () => {
    const bogus = await runIvoai(evalArgs("--compare", "lexical,semantic"));
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("expected one of lexical, hybrid");
    expect((await runIvoai(evalArgs("--k", "0"))).code).toBe(2);
    const noQrels = await runIvoai(["server", "eval", "--root", root, "--queries", queries]);
    expect(noQrels.code).toBe(2);
    expect(noQrels.stderr).toContain("--qrels");
    const hybrid = await runIvoai(evalArgs("--compare", "lexical,hybrid"));
    expect(hybrid.code).toBe(1);
    expect(hybrid.stderr).toContain("hybrid needs an embedder");
    const help = await runIvoai(["server", "eval", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--qrels");
  });

  it("says so when no judged document matches a document of the index", async () => {
    const wrong = path.join(root, "wrong-qrels.tsv");
    await writeFile(wrong, "q1\tDOC-17\t1\n");
    const result = await runIvoai(["server", "eval", "--root", root, "--queries", queries, "--qrels", wrong]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'no judged document was retrieved by any method: do the corpus-ids (e.g. "DOC-17")',
    );
  });

  it("changes neither the catalogue nor the index, and leaves one audit record without query text", async () => {
    const before = await storeRows(root, backend, pgUrl);
    const audited = async () =>
      JSON.parse(
        (await runIvoai(["server", "audit", "--root", root, "--kind", "retrieval_eval", "--json"])).stdout,
      ).events as { actor: string; detail: Record<string, unknown> }[];
    const count = (await audited()).length;
    // The search index's snapshot is written by ingest and the gateway: eval only reads it.
    const snapshot = path.join(root, "var/lib/ivoai/context/lexical-index.snapshot");
    const saved = await readFile(snapshot);
    const savedAt = (await stat(snapshot)).mtimeMs;
    expect((await runIvoai(evalArgs("--k", "3"))).code).toBe(0);
    expect(await storeRows(root, backend, pgUrl)).toBe(before);
    expect((await stat(snapshot)).mtimeMs).toBe(savedAt);
    expect((await readFile(snapshot)).equals(saved)).toBe(true);
    const events = await audited();
    expect(events).toHaveLength(count + 1);
    const last = events.at(-1);
    expect(last?.actor).toMatch(/^operator:/);
    expect(last?.detail).toEqual({
      source: "qrels",
      methods: ["lexical"],
      k: 3,
      queries: 3,
      judged_documents: 3,
    });
    expect(JSON.stringify(events)).not.toContain("vacation requests");
    const table = await runIvoai(["server", "audit", "--root", root, "--kind", "retrieval_eval"]);
    expect(table.stdout).toMatch(/retrieval_eval\s+eval lexical on 3 queries\s+operator:/);
  });

  it("--from-feedback judges by the documents a real MCP client opened after its searches", async () => {
    const empty = await runIvoai(["server", "eval", "--root", root, "--from-feedback"]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain("no judgments in the audit log yet");
    const server = await startServer(root);
    try {
      const client = await connectMcp(
        `${server.url}/v1/mcp/context`,
        await enrolledCredential(server.url, root),
      );
      try {
        type Found = { structuredContent?: { data?: { results?: { document_id: string; path: string }[] } } };
        const search = async (query: string) =>
          ((await client.callTool({ name: "context_search", arguments: { query } })) as Found)
            .structuredContent?.data?.results ?? [];
        const [vacation] = await search("vacation requests portal");
        expect(vacation?.path).toBe("guides/vacation.md");
        await client.callTool({
          name: "context_get_document",
          arguments: { document_id: vacation?.document_id },
        });
        // The agent opens the second result, by its resource: the judgment says the first was not what it wanted.
        const found = await search("release pipeline");
        expect(found.map((r) => r.path)).toEqual(["runbooks/deploy.md", "runbooks/rollback.md"]);
        await client.readResource({ uri: "ivoai://context/docs/runbooks/rollback.md" });
        await search("nothing opened after this search");
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
    const result = await runIvoai(["server", "eval", "--root", root, "--from-feedback", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      source: "feedback",
      queries: 2,
      judged_documents: 2,
      judged_documents_retrieved: 2,
    });
    // Query 1 found its document first (MRR 1), query 2 second (MRR 1/2).
    expect(report.methods[0].mrr10.mean).toBeCloseTo(0.75, 10);
    expect(report.methods[0].recall.mean).toBe(1);
    const both = await runIvoai(["server", "eval", "--root", root, "--from-feedback", "--queries", queries]);
    expect(both.code).toBe(2);
  });
});
