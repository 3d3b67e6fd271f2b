// provider = "onnx" as an operator meets it, through the built CLI and a running gateway: a pinned model folder
// (a tiny model made here, nothing downloaded) ingested and searched by meaning; doctor's embedder line; a tampered
// model file refusing `server start` in one line naming the file and both digests; a re-pinned new model rebuilding
// every vector under a new index name; memory pages embedded by the same model, memory_query finding one by meaning.
import { appendFile, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadServerConfig, saveServerConfig, serverConfigSchema } from "../src/config/server-config.js";
import { serverPaths } from "../src/config/server-paths.js";
import { unigramModelDir } from "../src/server/context/onnx/onnx.test-kit.js";
import { writeTree } from "./context-helpers.js";
import {
  addDocsConnector,
  callTool,
  connectMcp,
  enrolledCredential,
  initRoot,
  proposeAndApprove,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";

type Search = { results: { path: string }[] };
type Doctor = { status: string; checks: { name: string; status: string; detail: string }[] };

describe("the onnx embedder through the CLI", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  async function pin(root: string, modelDir: string, sha256: Record<string, string>): Promise<void> {
    const file = serverPaths(root).configFile;
    const config = await loadServerConfig(file);
    config.context.embedder = serverConfigSchema.parse({
      server: { public_url: "http://127.0.0.1:1" },
      context: { embedder: { provider: "onnx", model_dir: modelDir, sha256, dims: 4 } },
    }).context.embedder;
    await saveServerConfig(file, config);
  }

  async function search(root: string, query: string): Promise<string[]> {
    const result = await runIvoai(["server", "search", query, "--root", root, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as Search).results.map((hit) => hit.path);
  }

  it("ingests and finds by meaning, reports the model in doctor, refuses a tampered file and rebuilds after a re-pin", async () => {
    const [root, docs, model] = await Promise.all([
      tempDir("ivoai-onnx-root-"),
      tempDir("ivoai-onnx-docs-"),
      tempDir("ivoai-onnx-model-"),
    ]);
    cleanups.push(root.cleanup, docs.cleanup, model.cleanup);
    await writeTree(docs.dir, {
      "fleet.md": "# Fleet\n\nAutomobile servicing happens every spring.",
      "people.md": "# People\n\nOur vacation requests go through the portal.",
    });
    await initRoot(root.dir);
    await pin(root.dir, model.dir, await unigramModelDir(model.dir));
    await addDocsConnector(root.dir, docs.dir);
    const ingest = await runIvoai(["server", "ingest", "--root", root.dir, "--json"]);
    expect(ingest.code, ingest.stderr).toBe(0);
    // Neither document has the query's word: only the model's meaning finds them.
    expect((await search(root.dir, "car"))[0]).toBe("fleet.md");
    expect((await search(root.dir, "holiday"))[0]).toBe("people.md");
    const vectorsDir = path.join(serverPaths(root.dir).contextDir, "vectors");
    const [first] = await readdir(vectorsDir);
    expect(first).toMatch(/^ivoai-context-v1-multilingual-e5-small-d4-[0-9a-f]{8}\.bin$/);

    const server = await startServer(root.dir);
    try {
      const credential = await enrolledCredential(server.url, root.dir, "context:read,doctor:read");
      const client = await connectMcp(`${server.url}/v1/mcp/context`, credential);
      const found = await callTool(client, "context_search", { query: "automobile car", limit: 1 });
      expect((found.data.results as { path: string }[])[0]?.path).toBe("fleet.md");
      await client.close();
      const response = await fetch(`${server.url}/v1/admin/doctor`, {
        headers: { authorization: `Bearer ${credential}` },
      });
      const doctor = (await response.json()) as Doctor;
      const line = doctor.checks.find((check) => check.name === "embedder");
      expect(line?.status, JSON.stringify(line)).toBe("ok");
      expect(line?.detail).toContain(`onnx intfloat/multilingual-e5-small from ${model.dir}`);
      expect(line?.detail).toContain("2 files match their pins");
      expect(line?.detail).toContain(`4 dims, 2 int8 vectors in ${first?.replace(/\.bin$/, "")}`);
      expect(line?.detail).toContain("onnxruntime-node 1.31.1 loads");

      // Memory embeds its pages with the same model: an approved page is found by a word it does not hold.
      const agent = await connectMcp(
        `${server.url}/v1/memory/mcp`,
        await enrolledCredential(server.url, root.dir),
      );
      const approver = await enrolledCredential(server.url, root.dir, "approvals:read,approvals:decide");
      const page = { path: "notes/parking", body: "The car is in the north garage." };
      expect(await proposeAndApprove(server.url, agent, approver, page)).toEqual({
        proposed: "PENDING_HUMAN_APPROVAL",
        decided: 200,
      });
      const recalled = await callTool(agent, "memory_query", { query: "automobile" });
      const hits = recalled.data.results as { path: string; via: string[] }[];
      expect(hits.map((hit) => [hit.path, hit.via])).toEqual([["notes/parking", ["vector"]]]);
      await agent.close();
      const after = (await (
        await fetch(`${server.url}/v1/admin/doctor`, { headers: { authorization: `Bearer ${credential}` } })
      ).json()) as Doctor;
      const ranking = after.checks.find((check) => check.name === "memory_ranking");
      expect(ranking?.detail).toMatch(
        /^lexical fused with onnx vectors at weight 1, 4 dims, 1 int8 vectors in ivoai-memory-v1-multilingual-e5-small-d4-[0-9a-f]{8}$/,
      );
    } finally {
      await server.stop();
    }

    // One byte appended to the model: the start is refused, naming the file and both digests, on one line.
    await appendFile(path.join(model.dir, "model.onnx"), "x");
    const refused = await runIvoai(["server", "start", "--root", root.dir]);
    expect(refused.code).not.toBe(0);
    const lines = refused.stderr.trim().split("\n");
    expect(lines, refused.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /the embedding model file model\.onnx does not match its pin: sha256 [0-9a-f]{12}…, pinned [0-9a-f]{12}…/,
    );

    // Another model pinned (other weights): every vector is recomputed under a new index name, and searched.
    await pin(root.dir, model.dir, await unigramModelDir(model.dir, { swapped: true }));
    const again = await runIvoai(["server", "ingest", "--root", root.dir, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const rebuilt = (await readdir(vectorsDir)).find((name) => name !== first);
    expect(rebuilt).toMatch(/^ivoai-context-v1-multilingual-e5-small-d4-[0-9a-f]{8}\.bin$/);
    // The file header (16 bytes) and two int8 rows of id (32), scale (4) and 4 dims.
    expect((await stat(path.join(vectorsDir, rebuilt as string))).size).toBe(16 + 2 * (32 + 4 + 4));
    expect((await search(root.dir, "holiday"))[0]).toBe("people.md");
  });
});
