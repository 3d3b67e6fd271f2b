// MCP resources over real HTTP with the official SDK client: a real SQLite catalogue and memory store behind one
// endpoint, paged listing, labelled and limited reads, completion, scope refusals, hostile URIs and the audit.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../../shared/logger.js";
import type { AuditEvent, AuditLog, ToolCallEvent } from "../audit/store.js";
import { type DocumentReplacement, openSqliteCatalogue, type SqliteCatalogue } from "../context/catalogue.js";
import { MAX_DOCUMENT_BYTES } from "../context/filter.js";
import { CONTEXT_RESOURCE_TEMPLATE, createContextResources, documentUri } from "../context/resources.js";
import { UNTRUSTED_NOTICE } from "../context/tools.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { preparePageWrite } from "../memory/page-write.js";
import { createMemoryResources, MEMORY_RESOURCE_TEMPLATE, pageUri } from "../memory/resources.js";
import { type MemoryStore, openMemoryStore } from "../memory/store.js";
import { registerSkills, SKILL_URI } from "../web-mcp/skills.js";
import { createMcpEndpoint, type McpEndpoint } from "./endpoint.js";
import { connectClient, mcpFailure, serveHttp } from "./mcp.test-kit.js";
import { RESOURCE_NOT_FOUND, RESOURCE_PAGE_SIZE } from "./resources.js";

const CLIENTS: Record<string, AuthenticatedClient> = {
  both: { id: "cli_both", name: "both", scopes: ["context:read", "memory:read"] },
  context: { id: "cli_context", name: "context", scopes: ["context:read"] },
  memory: { id: "cli_memory", name: "memory", scopes: ["memory:read"] },
};
const AT = "2026-03-01T00:00:00.000Z";
/** 9,000,000 bytes of a three-byte character: the 8 MiB cut falls inside one. */
const BIG_BODY = "€".repeat(3_000_000);
const SPECIAL_PATH = "a b/100% ünï#?.md";

let seq = 0;
function doc(connector: string, relPath: string, pieces: string[]): DocumentReplacement {
  let offset = 0;
  const id = `doc_${(++seq).toString(16).padStart(8, "0")}`;
  return {
    document: {
      id,
      connector,
      rel_path: relPath,
      title: `Title of ${relPath}`,
      language: "en",
      fingerprint: `p1:${id}`,
      bytes: Buffer.byteLength(pieces.join("")),
      modified_at: AT,
      ingested_at: AT,
      metadata: {},
    },
    chunks: pieces.map((text, index) => {
      const chunk = { id: `${id}-${index}`.padEnd(32, "0"), index, unitStart: offset, text, terms: "t" };
      offset += text.length;
      return chunk;
    }),
  };
}

describe("MCP resources", () => {
  let dir: string;
  let catalogue: SqliteCatalogue;
  let memory: MemoryStore;
  let http: Awaited<ReturnType<typeof serveHttp>>;
  let base: string;
  const audited: AuditEvent[] = [];
  const audit = { record: async (event: AuditEvent) => void audited.push(event) } as unknown as AuditLog;
  const endpoints: Record<string, McpEndpoint> = {};
  const expectedUris = new Set<string>();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-resources-"));
    catalogue = openSqliteCatalogue(path.join(dir, "context.db"));
    memory = await openMemoryStore(path.join(dir, "memory.db"));
    for (const name of ["docs", "wiki"])
      await catalogue.addConnector({
        name,
        type: "filesystem",
        path: `/srv/${name}`,
        created_at: AT,
        last_ingest_at: null,
        allow_hardlinks: false,
        last_ingest: null,
      });
    const docs: DocumentReplacement[] = [];
    for (let i = 0; i < 230; i++) docs.push(doc("docs", `dir${i % 3}/file${i}.md`, [`body ${i}`]));
    docs.push(doc("wiki", SPECIAL_PATH, ["special body"]));
    docs.push(doc("wiki", "big.txt", [BIG_BODY.slice(0, 1_500_000), BIG_BODY.slice(1_500_000)]));
    await catalogue.replaceDocuments(docs);
    for (const d of docs) expectedUris.add(documentUri(d.document.connector, d.document.rel_path));
    const pages = [];
    for (let i = 0; i < 120; i++)
      pages.push(
        preparePageWrite({
          scope: i % 2 ? "git:acme/api" : "_global",
          path: `runbooks/page-${i}`,
          body: `# Page ${i}\n\nbody ${i}`,
          author: "cli_a",
        }),
      );
    await memory.writePages(pages, AT);
    for (const p of pages) expectedUris.add(pageUri(p.scope, p.path));

    const resources = [createContextResources(catalogue), createMemoryResources(memory)];
    const common = { instructions: "test", tools: [], logger: silentLogger, audit, resources };
    endpoints.main = createMcpEndpoint({ name: "test-resources", ...common });
    endpoints.small = createMcpEndpoint({ name: "test-small", ...common, maxResultChars: 200 });
    endpoints.web = createMcpEndpoint({
      name: "test-web",
      ...common,
      extend: (server) => {
        registerSkills(server);
        // A prompt with a completable argument: its completion still reaches the SDK past ivoai's handler.
        server.registerPrompt(
          "find",
          {
            description: "Find.",
            argsSchema: {
              topic: completable(z.string(), (value) => ["alpha", "beta"].filter((v) => v.startsWith(value))),
            },
          },
          ({ topic }) => ({ messages: [{ role: "user", content: { type: "text", text: topic } }] }),
        );
      },
      capabilities: { resources: {} },
    });
    http = await serveHttp((request: Request) => {
      const url = new URL(request.url);
      const [, endpoint = "", who = ""] = url.pathname.split("/");
      const client = CLIENTS[who];
      const handler = endpoints[endpoint];
      if (!client || !handler) return new Response("no", { status: 404 });
      return handler(request, client);
    });
    base = http.base;
  });

  afterAll(async () => {
    await http.close();
    await catalogue.close();
    await memory.close();
    await rm(dir, { recursive: true, force: true });
  });

  const connect = (who: string, endpoint = "main") =>
    connectClient(`${base}/${endpoint}/${who}`, {}, "resources-test");
  const failure = mcpFailure;

  async function listAll(client: Client): Promise<{ uris: string[]; pages: number }> {
    const uris: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      pages += 1;
      expect(page.resources.length).toBeLessThanOrEqual(RESOURCE_PAGE_SIZE);
      for (const resource of page.resources) {
        expect(resource.name).toEqual(expect.any(String));
        uris.push(resource.uri);
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return { uris, pages };
  }

  it("announces both templates to a credential with both scopes, one to a credential with one", async () => {
    const both = await connect("both");
    expect(both.getServerCapabilities()).toMatchObject({
      resources: { listChanged: false },
      completions: {},
    });
    const { resourceTemplates } = await both.listResourceTemplates();
    expect(resourceTemplates.map((t) => [t.name, t.uriTemplate])).toEqual([
      ["context-document", CONTEXT_RESOURCE_TEMPLATE],
      ["memory-page", MEMORY_RESOURCE_TEMPLATE],
    ]);
    expect(resourceTemplates[0]?.description).toContain(UNTRUSTED_NOTICE);
    const memoryOnly = await connect("memory");
    expect((await memoryOnly.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      MEMORY_RESOURCE_TEMPLATE,
    ]);
    await Promise.all([both.close(), memoryOnly.close()]);
  });

  it("lists every document and page once through nextCursor, and only what the scopes allow", async () => {
    const both = await connect("both");
    const all = await listAll(both);
    expect(all.pages).toBe(Math.ceil(expectedUris.size / RESOURCE_PAGE_SIZE));
    expect(new Set(all.uris).size).toBe(all.uris.length);
    expect(new Set(all.uris)).toEqual(expectedUris);
    expect(all.uris).toContain("ivoai://context/wiki/a%20b/100%25%20%C3%BCn%C3%AF%23%3F.md");
    expect(all.uris).toContain("ivoai://memory/git%3Aacme%2Fapi/runbooks/page-1");

    const contextOnly = await listAll(await connect("context"));
    expect(contextOnly.uris.every((uri) => uri.startsWith("ivoai://context/"))).toBe(true);
    expect(contextOnly.uris.length).toBe(232);
    const memoryOnly = await listAll(await connect("memory"));
    expect(memoryOnly.uris.every((uri) => uri.startsWith("ivoai://memory/"))).toBe(true);
    expect(memoryOnly.uris.length).toBe(120);

    // Web MCP's skill stays listed, first, and readable beside the templates.
    const web = await connect("both", "web");
    const first = await web.listResources();
    expect(first.resources[0]?.uri).toBe(SKILL_URI);
    expect(first.resources.length).toBe(RESOURCE_PAGE_SIZE);
    const webAll = await listAll(web);
    expect(new Set(webAll.uris)).toEqual(new Set([SKILL_URI, ...expectedUris]));
    expect(webAll.uris.length).toBe(expectedUris.size + 1);
    const skill = await web.readResource({ uri: SKILL_URI });
    expect(skill.contents[0]).toMatchObject({ uri: SKILL_URI, mimeType: "text/markdown" });
    // Prompt completion is still the SDK's, beside the templates' completion.
    const prompt = await web.complete({
      ref: { type: "ref/prompt", name: "find" },
      argument: { name: "topic", value: "a" },
    });
    expect(prompt.completion.values).toEqual(["alpha"]);
    const template = await web.complete({
      ref: { type: "ref/resource", uri: MEMORY_RESOURCE_TEMPLATE },
      argument: { name: "scope", value: "_" },
    });
    expect(template.completion).toEqual({ values: ["_global"], total: 1, hasMore: false });
    expect(
      (
        await failure(
          web.complete({ ref: { type: "ref/prompt", name: "nope" }, argument: { name: "x", value: "" } }),
        )
      ).code,
    ).toBe(-32602);
    await both.close();
  });

  it("refuses a cursor it did not hand out, or one for resources the credential cannot see, with -32602", async () => {
    const both = await connect("both");
    const memoryOnly = await connect("memory");
    const contextCursor = (await both.listResources()).nextCursor as string;
    expect(contextCursor).toEqual(expect.any(String));
    const forged = [
      "not a cursor!",
      Buffer.from('{"s":"nope"}').toString("base64url"),
      Buffer.from('{"s":"context-document","a":"[1]"}').toString("base64url"),
      Buffer.from('{"s":"memory-page","a":"garbage"}').toString("base64url"),
      Buffer.from('{"s":"memory-page","x":1}').toString("base64url"),
      "A".repeat(9000),
    ];
    for (const cursor of forged) expect((await failure(both.listResources({ cursor }))).code).toBe(-32602);
    expect((await failure(memoryOnly.listResources({ cursor: contextCursor }))).code).toBe(-32602);
    await Promise.all([both.close(), memoryOnly.close()]);
  });

  it("reads a document labelled untrusted, cut at 8 MiB, and a page as markdown; each read audited", async () => {
    const client = await connect("both");
    audited.length = 0;
    const special = documentUri("wiki", SPECIAL_PATH);
    const read = await client.readResource({ uri: special });
    expect(read.contents).toEqual([
      {
        uri: special,
        mimeType: "text/markdown",
        text: `${UNTRUSTED_NOTICE}\n\nspecial body`,
        _meta: expect.objectContaining({ "ivoai/untrusted": true, source: "wiki", path: SPECIAL_PATH }),
      },
    ]);
    // A %2F inside the path is a slash of the path: the same document.
    const slashed = await client.readResource({ uri: "ivoai://context/docs/dir1%2Ffile1.md" });
    expect(slashed.contents[0]).toMatchObject({ text: `${UNTRUSTED_NOTICE}\n\nbody 1` });

    const big = (await client.readResource({ uri: documentUri("wiki", "big.txt") })).contents[0] as {
      text: string;
      _meta: Record<string, unknown>;
    };
    const kept = Math.floor(MAX_DOCUMENT_BYTES / 3);
    expect(big.text).toBe(`${UNTRUSTED_NOTICE}\n\n${"€".repeat(kept)}`);
    expect(big._meta).toMatchObject({
      truncated: true,
      max_bytes: MAX_DOCUMENT_BYTES,
      "ivoai/untrusted": true,
    });

    const page = await client.readResource({ uri: pageUri("git:acme/api", "runbooks/page-3") });
    expect(page.contents[0]).toMatchObject({
      mimeType: "text/markdown",
      text: "# Page 3\n\nbody 3",
      _meta: { "ivoai/untrusted": false, scope: "git:acme/api", version: 1 },
    });
    const reads = audited.filter((event): event is ToolCallEvent => event.kind === "tool_call");
    expect(reads.map((event) => [event.tool, event.status, event.credential_id, event.endpoint])).toEqual(
      Array(4).fill(["resources/read", "SUCCESS", "cli_both", "test-resources"]),
    );
    expect(reads[0]?.detail).toEqual({ uri: special });
    expect(reads[2]?.tokens_consumed).toBeGreaterThan(1000);
    await client.close();
  });

  it("fails a read longer than the endpoint's maxResultChars, and audits it FAILED", async () => {
    const client = await connect("both", "small");
    audited.length = 0;
    const error = await failure(client.readResource({ uri: documentUri("wiki", "big.txt") }));
    expect(error.message).toContain("result_too_large");
    expect(audited).toMatchObject([{ tool: "resources/read", status: "FAILED", endpoint: "test-small" }]);
    // Small ones still pass.
    expect((await client.readResource({ uri: documentUri("docs", "dir0/file0.md") })).contents).toHaveLength(
      1,
    );
    await client.close();
  });

  it("answers a missing resource with -32002 and a clear message", async () => {
    const client = await connect("both");
    audited.length = 0;
    for (const uri of [
      "ivoai://context/docs/dir0/nope.md",
      "ivoai://context/nosuch/file.md",
      "ivoai://memory/_global/runbooks/nope",
      "file:///etc/passwd",
      "https://example.com/x",
      "skill://other/SKILL.md",
    ]) {
      const error = await failure(client.readResource({ uri }));
      expect(error.code).toBe(RESOURCE_NOT_FOUND);
      expect(error.message).toContain(`Resource not found: ${uri}`);
    }
    expect(audited.every((event) => event.kind === "tool_call" && event.status === "FAILED")).toBe(true);
    expect(audited).toHaveLength(6);
    await client.close();
  });

  it("refuses hostile URIs with -32602 before looking anything up, audited REJECTED", async () => {
    const client = await connect("both");
    audited.length = 0;
    const hostile = [
      "ivoai://context/docs/../wiki/big.txt",
      "ivoai://context/docs/dir0/../../wiki/big.txt",
      "ivoai://context/docs/%2e%2e/wiki/big.txt",
      "ivoai://context/docs/dir0/%2E%2E%2F%2E%2E%2Fwiki/big.txt",
      "ivoai://context/..%2Fwiki/big.txt",
      "ivoai://context/do%2Fcs/dir0/file0.md",
      "ivoai://context/docs/dir0%00/file0.md",
      "ivoai://context/docs/dir0/file0.md%0a",
      "ivoai://context/docs/dir0%5C..%5Cfile0.md",
      "ivoai://context/docs//dir0/file0.md",
      "ivoai://context/docs/%E0%A4%A",
      "ivoai://context/docs",
      `ivoai://context/docs/${"a/".repeat(1100)}x.md`,
      "ivoai://memory/_global/runbooks/../runbooks/page-0",
      "ivoai://memory/_global/runbooks//page-0",
      "ivoai://memory/%2e%2e/runbooks/page-0",
      "IVOAI://CONTEXT/docs/../x",
    ];
    for (const uri of hostile) {
      const error = await failure(client.readResource({ uri }));
      expect([uri, error.code]).toEqual([uri, -32602]);
      expect(error.message).toMatch(/invalid resource URI/);
    }
    expect(audited).toHaveLength(hostile.length);
    expect(
      audited.every(
        (event) =>
          event.kind === "tool_call" &&
          event.status === "REJECTED" &&
          event.detail?.rejected === "invalid_uri",
      ),
    ).toBe(true);
    // The over-long one is kept bounded in the audit log.
    expect(String((audited[12] as ToolCallEvent).detail?.uri).length).toBeLessThanOrEqual(512);
    await client.close();
  });

  it("refuses context URIs to a memory-only credential and memory URIs to a context-only one", async () => {
    const memoryOnly = await connect("memory");
    const contextOnly = await connect("context");
    audited.length = 0;
    const refusedContext = await failure(
      memoryOnly.readResource({ uri: documentUri("docs", "dir0/file0.md") }),
    );
    expect(refusedContext.code).toBe(-32602);
    expect(refusedContext.message).toContain("insufficient_scope");
    const refusedMemory = await failure(
      contextOnly.readResource({ uri: pageUri("git:acme/api", "runbooks/page-1") }),
    );
    expect(refusedMemory.message).toContain("insufficient_scope: memory-page resources need memory:read");
    expect(audited).toMatchObject([
      { status: "REJECTED", credential_id: "cli_memory", detail: { rejected: "insufficient_scope" } },
      { status: "REJECTED", credential_id: "cli_context", detail: { rejected: "insufficient_scope" } },
    ]);
    // Nor can they complete the other's template.
    const completion = await failure(
      memoryOnly.complete({
        ref: { type: "ref/resource", uri: CONTEXT_RESOURCE_TEMPLATE },
        argument: { name: "source", value: "" },
      }),
    );
    expect(completion.code).toBe(-32602);
    await Promise.all([memoryOnly.close(), contextOnly.close()]);
  });

  it("completes sources, paths within the chosen source, scopes and page paths, at most 100 with the total", async () => {
    const client = await connect("both");
    const complete = (uri: string, name: string, value: string, chosen?: Record<string, string>) =>
      client
        .complete({
          ref: { type: "ref/resource", uri },
          argument: { name, value },
          ...(chosen ? { context: { arguments: chosen } } : {}),
        })
        .then((answer) => answer.completion);
    expect(await complete(CONTEXT_RESOURCE_TEMPLATE, "source", "")).toEqual({
      values: ["docs", "wiki"],
      total: 2,
      hasMore: false,
    });
    expect(await complete(CONTEXT_RESOURCE_TEMPLATE, "source", "w")).toEqual({
      values: ["wiki"],
      total: 1,
      hasMore: false,
    });
    // 230 documents in docs, 77 under dir1/: the first 100 in order, and the totals.
    const docs = await complete(CONTEXT_RESOURCE_TEMPLATE, "path", "", { source: "docs" });
    expect(docs.values).toHaveLength(100);
    expect(docs).toMatchObject({ total: 230, hasMore: true });
    expect(docs.values).toEqual([...docs.values].sort());
    const dir1 = await complete(CONTEXT_RESOURCE_TEMPLATE, "path", "dir1/file1", { source: "docs" });
    expect(dir1.values).toEqual(["dir1/file1.md", ...dir1.values.slice(1)]);
    expect(dir1.values.every((value) => value.startsWith("dir1/file1"))).toBe(true);
    expect(dir1).toMatchObject({ total: dir1.values.length, hasMore: false });
    expect(await complete(CONTEXT_RESOURCE_TEMPLATE, "path", "a b/", { source: "wiki" })).toEqual({
      values: [SPECIAL_PATH],
      total: 1,
      hasMore: false,
    });
    // The chosen source percent-encoded as in a URI, and no source at all.
    expect((await complete(CONTEXT_RESOURCE_TEMPLATE, "path", "big", { source: "w%69ki" })).values).toEqual([
      "big.txt",
    ]);
    expect(await complete(CONTEXT_RESOURCE_TEMPLATE, "path", "dir")).toEqual({
      values: [],
      total: 0,
      hasMore: false,
    });

    expect(await complete(MEMORY_RESOURCE_TEMPLATE, "scope", "git")).toEqual({
      values: ["git:acme/api"],
      total: 1,
      hasMore: false,
    });
    const scoped = await complete(MEMORY_RESOURCE_TEMPLATE, "path", "runbooks/page-1", {
      scope: "git%3Aacme%2Fapi",
    });
    expect(scoped.values[0]).toBe("runbooks/page-1");
    expect(scoped.values).toEqual([...scoped.values].sort());
    expect(scoped.values.every((value) => value.startsWith("runbooks/page-1"))).toBe(true);
    expect(scoped).toMatchObject({ total: 16, hasMore: false });
    expect(scoped.values).toHaveLength(16);
    expect(await complete(MEMORY_RESOURCE_TEMPLATE, "nothing", "x")).toEqual({
      values: [],
      total: 0,
      hasMore: false,
    });
    const unknown = await failure(
      client.complete({
        ref: { type: "ref/resource", uri: "ivoai://other/{x}" },
        argument: { name: "x", value: "" },
      }),
    );
    expect(unknown.code).toBe(-32602);
    await client.close();
  });

  it("completes nothing for inherited argument names, refuses a NUL with -32602, and keeps scopes apart", async () => {
    const client = await connect("both");
    const complete = (uri: string, name: string, value: string, chosen?: Record<string, string>) =>
      client.complete({
        ref: { type: "ref/resource", uri },
        argument: { name, value },
        ...(chosen ? { context: { arguments: chosen } } : {}),
      });
    // Names of Object.prototype's members are not completers (they answered -32603 "completer is not a function").
    for (const name of ["__proto__", "toString", "constructor", "hasOwnProperty"]) {
      expect((await complete(MEMORY_RESOURCE_TEMPLATE, name, "")).completion).toEqual({
        values: [],
        total: 0,
        hasMore: false,
      });
    }
    // SQL wildcards are plain characters in a prefix.
    for (const value of ["%", "_", "%25", "runbooks/page-_"]) {
      expect(
        (await complete(MEMORY_RESOURCE_TEMPLATE, "path", value, { scope: "_global" })).completion,
      ).toEqual({ values: [], total: 0, hasMore: false });
    }
    // A NUL (typed or percent-encoded, as the value or a chosen variable) is the caller's error, not the server's.
    for (const [name, value, chosen] of [
      ["scope", "%00", undefined],
      ["scope", "a\u0000", undefined],
      ["path", "runbooks", { scope: "_glo%00bal" }],
    ] as const) {
      const refused = await failure(complete(MEMORY_RESOURCE_TEMPLATE, name, value, chosen));
      expect(refused.code).toBe(-32602);
      expect(refused.message).toContain("NUL");
    }
    // A memory-only credential completes no document source or path.
    const memoryOnly = await connect("memory");
    for (const name of ["source", "path"]) {
      const refused = await failure(
        memoryOnly.complete({
          ref: { type: "ref/resource", uri: CONTEXT_RESOURCE_TEMPLATE },
          argument: { name, value: "" },
          context: { arguments: { source: "docs" } },
        }),
      );
      expect(refused.code).toBe(-32602);
    }
    await Promise.all([client.close(), memoryOnly.close()]);
  });
});
