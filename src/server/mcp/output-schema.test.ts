// Every tool's listed outputSchema is closed and typed (what the MCP Inspector's --strict mode checks, and more),
// and every result the tools really return, success, failure or pending approval, validates against it.
// Our tools/call handler bypasses the SDK's own output validation, so this is where a drift would show.
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TOOL_NAMES, TOOLS } from "../../protocol/tools.js";
import { silentLogger } from "../../shared/logger.js";
import type { ContextService } from "../context/service.js";
import type { AuthenticatedClient } from "../enrollment/service.js";
import { preparePageWrite } from "../memory/page-write.js";
import type { MemoryService } from "../memory/service.js";
import { createMcpEndpoint, defineTool, type McpEndpoint } from "./endpoint.js";
import { openServices, rpcResult, type ServicesKit } from "./mcp.test-kit.js";

interface Finding {
  rule: string;
  path: string;
}

/** Keywords whose value is one subschema, a list of them, or a name → subschema map (JSON Schema 2020-12/draft-07). */
const ONE = ["items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties"];
const LIST = ["allOf", "anyOf", "oneOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "dependentSchemas", "definitions", "$defs"];
/** Keywords where a bare boolean is a legal schema for the Inspector. */
const BOOLEAN_VALUED = new Set([
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
]);
/** Keywords that constrain an instance (the Inspector's CONSTRAINING_KEYWORDS). */
const CONSTRAINING = new Set([
  ...["type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"],
  ...["maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema"],
  ...["maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties"],
  ...["required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains"],
  ...["additionalItems", "unevaluatedItems", "properties", "patternProperties", "additionalProperties"],
  ...["unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef"],
  "$recursiveRef",
]);
const COMBINATORS = ["anyOf", "oneOf", "allOf", "$ref"];

/**
 * Lints one schema. `inspector`: the rules of the MCP Inspector 2.12.0's `--strict` (clients/cli/build/index.js,
 * core/json/schemaLint.ts: boolean-schema, type-union, remote-ref, untyped-schema). `closed` adds ours for
 * output: no `additionalProperties: true`, every object closed or a typed map, every array typed, every leaf
 * with a `type`.
 */
function lintSchema(schema: unknown, closed: boolean): Finding[] {
  const findings: Finding[] = [];
  const walk = (node: unknown, at: string, keyword: string | undefined) => {
    if (typeof node === "boolean") {
      const allowed = keyword !== undefined && BOOLEAN_VALUED.has(keyword);
      if (!allowed) findings.push({ rule: "boolean-schema", path: at });
      else if (node && closed) findings.push({ rule: "open-additional-properties", path: at });
      return;
    }
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    const record = node as Record<string, unknown>;
    if (Array.isArray(record.type)) findings.push({ rule: "type-union", path: at });
    if (typeof record.$ref === "string" && !record.$ref.startsWith("#"))
      findings.push({ rule: "remote-ref", path: at });
    const constrains =
      Object.keys(record).some((key) => CONSTRAINING.has(key)) ||
      ("if" in record && ("then" in record || "else" in record));
    if (!constrains && keyword !== "not") findings.push({ rule: "untyped-schema", path: at });
    if (closed) {
      if (record.type === undefined && !COMBINATORS.some((key) => key in record))
        findings.push({ rule: "missing-type", path: at });
      if (record.type === "object") {
        const extra = record.additionalProperties;
        const typedMap =
          typeof extra === "object" && extra !== null && Object.keys(extra as object).length > 0;
        if (!("properties" in record) && !typedMap)
          findings.push({ rule: "object-without-properties", path: at });
        if ("properties" in record && extra !== false) findings.push({ rule: "open-object", path: at });
      }
      if (record.type === "array" && !("items" in record)) findings.push({ rule: "untyped-array", path: at });
    }
    for (const key of ONE) if (key in record) walk(record[key], `${at}.${key}`, key);
    for (const key of LIST) {
      const list = record[key];
      if (Array.isArray(list))
        for (const [index, item] of list.entries()) walk(item, `${at}.${key}[${index}]`, key);
    }
    for (const key of MAP) {
      const map = record[key];
      if (typeof map === "object" && map !== null) {
        for (const [name, sub] of Object.entries(map)) walk(sub, `${at}.${key}.${name}`, key);
      }
    }
  };
  walk(schema, "", undefined);
  return findings;
}

function lintTool(tool: Tool): (Finding & { tool: string })[] {
  return [
    ...lintSchema(tool.inputSchema, false).map((f) => ({ ...f, path: `inputSchema${f.path}` })),
    ...lintSchema(tool.outputSchema, true).map((f) => ({ ...f, path: `outputSchema${f.path}` })),
  ].map((finding) => ({ ...finding, tool: tool.name }));
}

const everyone: AuthenticatedClient = {
  id: "cli_schema",
  name: "schema",
  scopes: ["context:read", "memory:read", "memory:write", "memory:delete"],
};

describe("tool output schemas", () => {
  let kit: ServicesKit;
  let context: ContextService;
  let memory: MemoryService;
  let endpoint: McpEndpoint;
  /** The same tools with a 1-character result limit: every read that returns text fails with result_too_large. */
  let tiny: McpEndpoint;
  let listed: Tool[];
  let eventId: string;

  beforeAll(async () => {
    kit = await openServices("ivoai-output-schema-");
    ({ context, memory } = kit);
    const dir = kit.dir;
    const docs = path.join(dir, "docs");
    await mkdir(docs);
    await writeFile(
      path.join(docs, "deploy.md"),
      "# Deploying billing\n\nRun the billing deploy with care.\n",
    );
    await context.addConnector({ name: "docs", type: "filesystem", path: docs });
    await context.ingest(["docs"]);
    const at = new Date(Date.now() - 60_000).toISOString();
    await memory.store.writePage(
      preparePageWrite({
        scope: "_global",
        path: "runbooks/deploy-billing",
        body: "# Deploy billing\n\nSee [[runbooks/rollback]] before the billing deploy.",
        author: "cli_schema",
        tags: ["billing"],
        relations: { owned_by: ["teams/payments"] },
        expires_at: "2099-01-01T00:00:00.000Z",
      }),
      at,
    );
    await memory.store.writePage(
      preparePageWrite({
        scope: "_global",
        path: "runbooks/rollback",
        body: "# Rollback\n\nUndo.",
        author: "x",
      }),
      at,
    );
    await memory.searcher.refresh();
    eventId = await memory.store.addEpisode({
      session_id: "s1",
      project: "p",
      kind: "tool_used",
      recorded_at: at,
      valid_from: at,
      valid_to: null,
      data: { tool: "Bash", nested: { list: [1, "two", null, { ok: true }] } },
      credential_id: everyone.id,
    });
    const tools = [...context.tools, ...memory.tools];
    endpoint = createMcpEndpoint({
      name: "all",
      instructions: "t",
      tools,
      logger: silentLogger,
      gate: memory.gate,
    });
    tiny = createMcpEndpoint({
      name: "tiny",
      instructions: "t",
      tools,
      logger: silentLogger,
      gate: memory.gate,
      maxResultChars: 1,
    });
    listed = (await rpcResult<{ tools: Tool[] }>(endpoint, everyone, "tools/list")).tools;
  });
  afterAll(async () => {
    await kit?.close();
  });

  it("lists a closed, typed outputSchema for every tool, with nothing the Inspector's strict mode flags", () => {
    expect(listed.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of listed) {
      expect(tool.outputSchema, tool.name).toMatchObject({ type: "object", additionalProperties: false });
    }
    expect(listed.flatMap(lintTool)).toEqual([]);
  });

  it("flags what the old envelope listed: an accept-anything data map, type arrays, open objects", async () => {
    const loose = createMcpEndpoint({
      name: "loose",
      instructions: "t",
      logger: silentLogger,
      tools: [
        defineTool({
          name: "context_health",
          title: "Health",
          description: "Health.",
          tier: "read",
          scope: "context:read",
          input: {},
          output: z.object({
            data: z.record(z.string(), z.unknown()),
            when: z.string().nullable(),
            list: z.array(z.looseObject({ a: z.string() })),
          }),
          run: async () => ({ data: { data: {}, when: null, list: [] }, text: "" }),
        }),
      ],
    });
    const [tool] = (await rpcResult<{ tools: Tool[] }>(loose, everyone, "tools/list")).tools;
    const rules = lintTool(tool as Tool).map((finding) => `${finding.rule} ${finding.path}`);
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^untyped-schema outputSchema.*\.data\.additionalProperties$/),
        expect.stringMatching(/^type-union outputSchema.*\.when$/),
        expect.stringMatching(/^open-object outputSchema.*\.list\.items$/),
      ]),
    );
  });

  it("returns, for every tool and outcome, structuredContent that validates against the listed schema", async () => {
    const validator = new AjvJsonSchemaValidator();
    const schemas = new Map(
      listed.map((tool) => [tool.name, validator.getValidator(tool.outputSchema as never)]),
    );
    // A write is proposed first, so its approval id can be asked about.
    const cases: [McpEndpoint, string, Record<string, unknown>, string][] = [
      [endpoint, "memory_write_page", { path: "notes/new", body: "# New\n\ntext" }, "PENDING_HUMAN_APPROVAL"],
      [endpoint, "memory_write_page", { path: "notes/x", body: "x", scope: "project" }, "FAILED"],
      [endpoint, "memory_feedback", { path: "runbooks/rollback", kind: "stale" }, "PENDING_HUMAN_APPROVAL"],
      [endpoint, "memory_feedback", { path: "runbooks/none", kind: "stale" }, "FAILED"],
      [
        endpoint,
        "memory_delete_page",
        { path: "runbooks/rollback", confirm: true },
        "PENDING_HUMAN_APPROVAL",
      ],
      [endpoint, "memory_delete_page", { path: "Runbooks/Rollback/", confirm: true }, "FAILED"],
      [
        endpoint,
        "memory_promote_episode",
        { event_id: eventId, path: "notes/event" },
        "PENDING_HUMAN_APPROVAL",
      ],
      [endpoint, "memory_promote_episode", { event_id: "evt_none", path: "notes/event" }, "FAILED"],
      [endpoint, "context_search", { query: "billing deploy" }, "SUCCESS"],
      [tiny, "context_search", { query: "billing deploy" }, "FAILED"],
      [endpoint, "context_recent", {}, "SUCCESS"],
      [tiny, "context_recent", {}, "FAILED"],
      [endpoint, "context_get_document", { document_id: "doc_00" }, "FAILED"],
      [endpoint, "context_health", {}, "SUCCESS"],
      [tiny, "context_health", {}, "FAILED"],
      [endpoint, "memory_query", { query: "billing deploy" }, "SUCCESS"],
      [tiny, "memory_query", { query: "billing deploy" }, "FAILED"],
      [endpoint, "memory_recent", {}, "SUCCESS"],
      [tiny, "memory_recent", {}, "FAILED"],
      [endpoint, "memory_read_page", { path: "runbooks/deploy-billing" }, "SUCCESS"],
      [endpoint, "memory_read_page", { path: "runbooks/none" }, "FAILED"],
      [endpoint, "memory_status", {}, "SUCCESS"],
      [tiny, "memory_status", {}, "FAILED"],
      [endpoint, "memory_approval_status", { approval_id: "apr_none" }, "FAILED"],
      [endpoint, "memory_episodes", { session_id: "s1" }, "SUCCESS"],
      [endpoint, "memory_episodes", { scope: "project" }, "FAILED"],
    ];
    const seen = new Set<string>();
    const check = async (on: McpEndpoint, name: string, args: Record<string, unknown>, status: string) => {
      const result = await rpcResult<CallToolResult>(on, everyone, "tools/call", { name, arguments: args });
      const envelope = result.structuredContent as { status: string; data: Record<string, unknown> };
      expect(envelope?.status, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content)}`).toBe(
        status,
      );
      const verdict = (schemas.get(name) as ReturnType<typeof validator.getValidator>)(envelope);
      expect(verdict.valid ? "valid" : verdict.errorMessage, `${name} → ${status}`).toBe("valid");
      seen.add(`${name} ${status}`);
      return envelope.data;
    };
    const ids: string[] = [];
    for (const [on, name, args, status] of cases) {
      const data = await check(on, name, args, status);
      if (status === "PENDING_HUMAN_APPROVAL") ids.push(data.approval_id as string);
    }
    const search = await check(endpoint, "context_search", { query: "billing deploy" }, "SUCCESS");
    const [hit] = search.results as { document_id: string; metadata: Record<string, unknown> }[];
    expect(hit?.metadata).toEqual({ connector_type: "filesystem", extension: "md" });
    await check(endpoint, "context_get_document", { document_id: hit?.document_id }, "SUCCESS");
    await check(tiny, "context_get_document", { document_id: hit?.document_id }, "FAILED");
    for (const id of ids) await check(endpoint, "memory_approval_status", { approval_id: id }, "SUCCESS");
    await check(tiny, "memory_approval_status", { approval_id: ids[0] }, "FAILED");
    await check(tiny, "memory_episodes", { session_id: "s1" }, "FAILED");
    await check(tiny, "memory_read_page", { path: "runbooks/deploy-billing" }, "FAILED");
    // Decided requests carry decided_at and a reason: still the same schema.
    await memory.gate.decide(ids[1] as string, false, "person", "no");
    await check(endpoint, "memory_approval_status", { approval_id: ids[1] }, "SUCCESS");
    // A graph neighbour (neighbour_of) and a nested episode payload are inside their schemas too.
    const query = await check(endpoint, "memory_query", { query: "billing deploy" }, "SUCCESS");
    expect(query.results).toEqual(
      expect.arrayContaining([expect.objectContaining({ neighbour_of: expect.any(Object) })]),
    );
    // Every tool was seen succeeding (or pending, for writes) and failing.
    for (const name of TOOL_NAMES) {
      const ok = TOOLS[name].tier === "read" ? "SUCCESS" : "PENDING_HUMAN_APPROVAL";
      expect([seen.has(`${name} ${ok}`), seen.has(`${name} FAILED`)], name).toEqual([true, true]);
    }
  });
});
