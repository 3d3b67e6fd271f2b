// One small MCP request must not stall the gateway (issue 27): JSON-RPC batches are refused under protocol
// 2025-06-18 and later, and under older versions run one message at a time within a budget of messages and
// answer bytes, while /health keeps answering beside them; and what every MCP endpoint declares and answers to
// a GET, checked over raw HTTP: tools.listChanged false, and 405 with Allow: POST (no stream is served).
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  enrolledCredential,
  initWithDocs,
  type RunningServer,
  runIvoai,
  startServer,
  tempDir,
} from "./helpers.js";
import { obtainTokens } from "./oauth-flow.js";
import { MCP_INITIALIZE } from "./raw-http.js";

/** Just under the 8 MiB a document may have, in ordinary lines, so that the whole of it is indexed. */
const BIG_DOCUMENT_BYTES = 8 * 1024 * 1024 - 4096;
/** The default batch budget (src/server/mcp/batch.ts): 20 messages, 32 MiB of answers. */
const MAX_MESSAGES = 20;
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Room for the error answers that replace the calls past the budget (each well under 400 bytes). */
const ERROR_ROOM = 100 * 400;

type Answer = { id: number; result?: { isError?: boolean }; error?: { code: number; message: string } };

describe("JSON-RPC batches against a real gateway", () => {
  let root: string;
  let server: RunningServer;
  let bearer: string;
  let documentId: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const made = await tempDir();
    const docs = await tempDir("ivoai-docs-");
    cleanups.push(made.cleanup, docs.cleanup);
    root = made.dir;
    const line = "Billing runbook: deploy the payments service, then watch the ledger dashboard.\n";
    await writeFile(
      path.join(docs.dir, "big.md"),
      `# Big\n\n${line.repeat(BIG_DOCUMENT_BYTES / line.length)}`,
    );
    await writeFile(path.join(docs.dir, "small.md"), "# Small\n\nThe billing rota is on the wiki.\n");
    await initWithDocs(root, docs.dir);
    server = await startServer(root);
    bearer = await enrolledCredential(server.url, root, "context:read");
    const found = await mcp(call(0, "context_search", { query: "ledger dashboard" }), "2025-06-18");
    const data = (JSON.parse(found.body) as { result: { structuredContent: { data: unknown } } }).result
      .structuredContent.data as { results: { document_id: string; path: string }[] };
    documentId = data.results.find((result) => result.path === "big.md")?.document_id as string;
    expect(documentId).toMatch(/^doc_/);
  }, 900_000);
  afterAll(async () => {
    await server?.stop();
    for (const cleanup of cleanups) await cleanup();
  });

  function call(id: number, name: string, args: Record<string, unknown>) {
    return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
  }

  /** POSTs `body` to the context endpoint under `version`; the answer's status and text. */
  async function mcp(body: unknown, version: string): Promise<{ status: number; body: string }> {
    const answer = await fetch(`${server.url}/v1/mcp/context`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${bearer}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": version,
      },
      body: JSON.stringify(body),
    });
    return { status: answer.status, body: await answer.text() };
  }

  /**
   * Asks /health again and again until `work` settles: every ask must be answered 200 within a generous 30 s
   * (what failed for 24-35 s before the fix); returns how many were answered and what went wrong.
   */
  async function healthBeside<T>(
    work: Promise<T>,
  ): Promise<{ result: T; answered: number; failures: string[] }> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
    });
    let answered = 0;
    const failures: string[] = [];
    while (!settled) {
      try {
        const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(30_000) });
        await health.text();
        if (health.status === 200) answered += 1;
        else failures.push(`HTTP ${health.status}`);
      } catch (error) {
        failures.push(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      }
    }
    return { result: await done, answered, failures };
  }

  /** The gateway's peak resident memory so far (VmHWM), in bytes. */
  async function peakRss(): Promise<number> {
    const status = await readFile(`/proc/${server.child.pid}/status`, "utf8");
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
  }

  it("refuses a batch under 2025-06-18 and 2025-11-25 without reading anything", async () => {
    const reads = Array.from({ length: 40 }, (_, id) =>
      call(id, "context_get_document", { document_id: documentId }),
    );
    for (const version of ["2025-06-18", "2025-11-25"]) {
      const answer = await mcp(reads, version);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({
        id: null,
        error: { code: -32600, message: expect.stringContaining(`protocol version ${version}`) },
      });
    }
  });

  it.each([40, 100])(
    "answers %i reads of an 8 MiB document in one old-version batch within the budget, /health answering beside",
    async (count) => {
      const before = await peakRss();
      const reads = Array.from({ length: count }, (_, id) =>
        call(id, "context_get_document", { document_id: documentId }),
      );
      const { result, answered, failures } = await healthBeside(mcp(reads, "2025-03-26"));
      expect({ failures, someAnswered: answered > 0 }).toEqual({ failures: [], someAnswered: true });
      expect(result.status).toBe(200);
      // The answer is bounded by the budget, whatever the batch asks for (it was 324 MiB for 40 reads).
      expect(Buffer.byteLength(result.body)).toBeLessThan(MAX_ANSWER_BYTES + ERROR_ROOM);
      const answers = JSON.parse(result.body) as Answer[];
      expect(answers.map((answer) => answer.id)).toEqual([...Array(count).keys()]);
      const read = answers.filter((answer) => answer.result && !answer.result.isError).length;
      expect(read).toBeGreaterThan(0);
      expect(answers.slice(read).every((answer) => answer.error?.code === -32000)).toBe(true);
      expect(answers[count - 1]?.error?.message).toMatch(/^Batch budget exceeded/);
      // Reads run one at a time: the gateway's memory grows by far less than the 2 GB forty at once took.
      const grown = (await peakRss()) - before;
      expect(grown, `peak RSS grew by ${grown} bytes`).toBeLessThan(1024 * 1024 * 1024);
    },
    600_000,
  );

  it("runs at most the budget's messages of 100 context_search calls in one request, /health answering beside", async () => {
    const searches = Array.from({ length: 100 }, (_, id) =>
      call(id, "context_search", { query: `billing ledger payments ${id}`, limit: 10 }),
    );
    const { result, answered, failures } = await healthBeside(mcp(searches, "2025-03-26"));
    expect({ failures, someAnswered: answered > 0 }).toEqual({ failures: [], someAnswered: true });
    const answers = JSON.parse(result.body) as Answer[];
    expect(answers.filter((answer) => answer.result).length).toBe(MAX_MESSAGES);
    expect(answers.slice(MAX_MESSAGES).every((answer) => answer.error?.code === -32000)).toBe(true);
  }, 600_000);

  it("declares tools.listChanged false and answers a GET with 405 and Allow: POST on every MCP endpoint", async () => {
    const { code } = JSON.parse(
      (await runIvoai(["server", "activation", "create", "--root", root, "--json"])).stdout,
    ) as { code: string };
    const { tokens } = await obtainTokens(server.url, code, "context:read memory:read");
    const memoryBearer = await enrolledCredential(server.url, root, "memory:read");
    for (const [endpoint, token] of [
      ["/v1/mcp/context", bearer],
      ["/v1/memory/mcp", memoryBearer],
      ["/mcp", tokens.access_token],
    ] as const) {
      const url = `${server.url}${endpoint}`;
      const initialized = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
        },
        body: MCP_INITIALIZE,
      });
      const capabilities = ((await initialized.json()) as { result: { capabilities: { tools: unknown } } })
        .result.capabilities;
      expect({ endpoint, tools: capabilities.tools }).toEqual({ endpoint, tools: { listChanged: false } });
      const get = await fetch(url, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: "text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        signal: AbortSignal.timeout(30_000),
      });
      expect({ endpoint, status: get.status, allow: get.headers.get("allow") }).toEqual({
        endpoint,
        status: 405,
        allow: "POST",
      });
      await get.text();
    }
  }, 300_000);
});
