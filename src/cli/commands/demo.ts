// `ivoai demo`: the main job on embedded defaults — a server under a temp root, an enrolled client, discovery.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { loadServerConfig } from "../../config/server-config.js";
import { serverPaths } from "../../config/server-paths.js";
import { openContextService } from "../../server/context/service.js";
import { createEnrollmentService } from "../../server/enrollment/service.js";
import { openServerEnrollmentStore } from "../../server/enrollment/store.js";
import { initServer } from "../../server/init.js";
import { startGateway } from "../../server/start.js";
import { IvoaiError } from "../../shared/errors.js";
import { createLogger, silentLogger } from "../../shared/logger.js";
import { defineCommand } from "../command.js";
import { DEMO_CORPUS } from "./demo-corpus.js";
import { workerEntry } from "./server-common.js";

export const demoCommand = defineCommand({
  name: "demo",
  summary: "Run a throw-away server on a sample corpus, enroll a client and search through MCP",
  description:
    "Initialises a server tree in a temporary folder, ingests a small sample corpus (English and Portuguese),\n" +
    "starts the gateway on 127.0.0.1 (any free port), creates a single-use enrollment code, exchanges it for a\n" +
    "credential (kept in memory, never printed), prints the discovery document and runs a search through the\n" +
    "context MCP endpoint with the official MCP client. Removes the tree at the end unless --keep.",
  json: true,
  options: {
    keep: { type: "boolean", description: "keep the temporary server tree and print its path" },
    verbose: { type: "boolean", description: "show the gateway's JSON logs on stderr" },
    query: {
      type: "string",
      value: "TEXT",
      description: "what to search for (default: how to deploy billing)",
    },
  },
  async run(ctx) {
    const root = await mkdtemp(path.join(tmpdir(), "ivoai-demo-"));
    const logger = ctx.options.verbose ? createLogger() : silentLogger;
    try {
      ctx.out.note(`[1/5] initialising a server tree under ${root}`);
      await initServer({ root, publicUrl: "http://127.0.0.1:0", listen: "127.0.0.1:0" });
      const paths = serverPaths(root);
      const corpus = path.join(root, "sample-corpus");
      for (const [relPath, text] of Object.entries(DEMO_CORPUS)) {
        await mkdir(path.dirname(path.join(corpus, relPath)), { recursive: true });
        await writeFile(path.join(corpus, relPath), text);
      }
      const context = openContextService({
        paths,
        config: await loadServerConfig(paths.configFile),
        logger,
        ...workerEntry(),
      });
      const [ingested] = await context
        .addConnector({ name: "sample", type: "filesystem", path: corpus })
        .then(() => context.ingest(["sample"]))
        .finally(() => context.close());
      ctx.out.note(
        `[2/5] ingested ${ingested?.added ?? 0} sample documents (${ingested?.chunks ?? 0} chunks)`,
      );
      const gateway = await startGateway({ root, logger });
      try {
        ctx.out.note(`[3/5] gateway listening on ${gateway.url}`);
        const store = await openServerEnrollmentStore(paths);
        const { code } = await createEnrollmentService({ store })
          .createCode({ ttlMs: 600_000 })
          .finally(() => store.close());
        ctx.out.note("[4/5] enrolling a client with a single-use code");
        const enrolled = await getJson<{ client_id: string; credential: string; scopes: string[] }>(
          `${gateway.url}/v1/enroll`,
          {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ code, client_name: "demo" }),
          },
        );
        const status = await getJson<Record<string, unknown>>(`${gateway.url}/v1/admin/status`, {
          headers: { authorization: `Bearer ${enrolled.credential}` },
        });
        const discovery = await getJson<Record<string, unknown>>(`${gateway.url}/.well-known/ivoai`, {});
        const query = ctx.options.query ?? "how do I deploy the billing service?";
        ctx.out.note(
          `[5/5] client ${enrolled.client_id} searches "${query}" through ${gateway.url}/v1/mcp/context`,
        );
        const search = await searchThroughMcp(`${gateway.url}/v1/mcp/context`, enrolled.credential, query);
        ctx.out.data(
          {
            root: ctx.options.keep ? root : null,
            url: gateway.url,
            client_id: enrolled.client_id,
            status,
            discovery,
            search,
          },
          (value) =>
            `discovery document (${value.url}/.well-known/ivoai):\n${JSON.stringify(value.discovery, null, 2)}\n\n` +
            `context_search "${query}" through MCP:\n${value.search.text}`,
        );
      } finally {
        await gateway.close();
      }
    } finally {
      if (ctx.options.keep) ctx.out.note(`kept the server tree at ${root}`);
      // Retried: on a loaded machine a store's last file (a SQLite -wal or -shm) can still be going away.
      else await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    }
    return 0;
  },
});

/** Calls context_search with the official MCP client, the way an agent would. */
async function searchThroughMcp(
  url: string,
  credential: string,
  query: string,
): Promise<{ text: string; structured: unknown; tools: string[] }> {
  const client = new Client({ name: "ivoai-demo", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    const result = await client.callTool({ name: "context_search", arguments: { query, limit: 3 } });
    const text = (result.content as { type: string; text?: string }[])
      .map((item) => item.text ?? "")
      .join("\n");
    return { text, structured: result.structuredContent, tools };
  } finally {
    await client.close();
  }
}

async function getJson<T>(url: string, init: RequestInit): Promise<T> {
  const response = await fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(10_000) });
  if (!response.ok) {
    throw new IvoaiError(
      "NETWORK",
      `${init.method ?? "GET"} ${new URL(url).pathname} answered ${response.status}`,
    );
  }
  return (await response.json()) as T;
}
