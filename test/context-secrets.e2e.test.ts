// Secrets never reach the context index: files named like keys and files holding key- or token-shaped content
// are skipped by `ivoai server ingest` with the reason in its report (never the secret), and searches miss them.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogueSnapshot, rootAndDocs } from "./context-helpers.js";
import {
  addDocsConnector,
  connectMcp,
  enrolledCredential,
  initRoot,
  type RunningServer,
  runIvoai,
  startServer,
} from "./helpers.js";
import { SECRETS } from "./secret-fixtures.js";

interface Summary {
  added: number;
  removed: number;
  skipped_by_reason: Record<string, number>;
  skipped_examples: { path: string; reason: string }[];
}

/** The secret values themselves: the longest piece of each fixture between spaces, `=` and line ends. */
const secretValues = Object.values(SECRETS).map(
  (text) => text.split(/[\s=]/).sort((a, b) => b.length - a.length)[0] as string,
);

describe("sensitive documents end to end", () => {
  let root: string;
  let docs: string;
  let server: RunningServer | undefined;
  let client: Client | undefined;
  const cleanups: (() => Promise<void>)[] = [];
  const ingest = async (): Promise<{ summary: Summary; output: string }> => {
    const result = await runIvoai(["server", "ingest", "--root", root, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const human = await runIvoai(["server", "ingest", "--root", root]);
    return {
      summary: (JSON.parse(result.stdout) as { summaries: Summary[] }).summaries[0] as Summary,
      output: result.stdout + result.stderr + human.stdout + human.stderr,
    };
  };

  beforeAll(async () => {
    ({ root, docs } = await rootAndDocs(
      {
        "guide.md":
          "# Key hygiene\n\nThe wombat rule: never commit a PRIVATE KEY; ids look like AKIAIOSFODNN7EXAMPLE.",
        "later.md": "# Later\n\nquokka notes, harmless for now.",
        "keys.md": `# Keys\n\nnumbat\n${SECRETS["AWS access key"]}`,
        "id_rsa.md": "# My key\n\nnumbat, pasted as markdown.",
        "backup/id_ed25519.txt": "numbat",
        "ops/deploy.md": `# Deploy\n\nnumbat\n${SECRETS["private key"]}`,
        "ops/github.md": `numbat ${SECRETS["GitHub token"]}`,
        "ops/slack.md": `numbat ${SECRETS["Slack token"]}`,
        "ops/session.md": `numbat ${SECRETS.JWT}`,
      },
      cleanups,
    ));
    await initRoot(root);
    await addDocsConnector(root, docs);
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  it("skips them as sensitive, saying why without printing the secret", async () => {
    const { summary, output } = await ingest();
    expect(summary.added).toBe(2);
    expect(summary.skipped_by_reason).toEqual({
      "sensitive file": 2,
      "sensitive content: AWS access key": 1,
      "sensitive content: private key": 1,
      "sensitive content: GitHub token": 1,
      "sensitive content: Slack token": 1,
      "sensitive content: JWT": 1,
    });
    expect(summary.skipped_examples).toContainEqual({
      path: "keys.md",
      reason: "sensitive content: AWS access key",
    });
    expect(summary.skipped_examples).toContainEqual({ path: "id_rsa.md", reason: "sensitive file" });
    expect(output).toContain("sensitive content");
    for (const secret of secretValues) expect(output).not.toContain(secret);
    const catalogue = catalogueSnapshot(root);
    expect(catalogue).toContain("wombat");
    expect(catalogue).not.toContain("numbat");
    for (const secret of secretValues) expect(catalogue).not.toContain(secret);
  });

  it("removes a document once a secret is written into it", async () => {
    await writeFile(
      path.join(docs, "later.md"),
      `# Later\n\nquokka notes, now with ${SECRETS["GitHub token"]}`,
    );
    const { summary } = await ingest();
    expect(summary.removed).toBe(1);
    expect(summary.skipped_by_reason["sensitive content: GitHub token"]).toBe(2);
    expect(catalogueSnapshot(root)).not.toContain("quokka");
  });

  it("finds none of them with context_search", async () => {
    server = await startServer(root);
    const mcp = await connectMcp(`${server.url}/v1/mcp/context`, await enrolledCredential(server.url, root));
    client = mcp;
    const search = async (query: string) => {
      const result = await mcp.callTool({ name: "context_search", arguments: { query } });
      const data = (result.structuredContent as { data: { results: { path: string }[] } }).data;
      return data.results.map((hit) => hit.path);
    };
    expect(await search("wombat")).toEqual(["guide.md"]);
    expect(await search("numbat")).toEqual([]);
    expect(await search("quokka")).toEqual([]);
  });
});
