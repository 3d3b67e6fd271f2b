// MCP resources of an endpoint: URI templates over ivoai's documents and pages, one resources/list paginated
// across them by an opaque keyset cursor, reads with the tools' limits, labels and audit, and completion of the
// templates' variables. The SDK registers the templates (templates/list, capabilities); the handlers it installs
// for list, read and complete are replaced, because its list ignores cursors and its read neither audits nor
// tells a malformed URI from a missing resource.

import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CompleteRequest,
  CompleteRequestSchema,
  type CompleteResult,
  ErrorCode,
  type ListResourcesRequest,
  ListResourcesRequestSchema,
  type ListResourcesResult,
  McpError,
  type ReadResourceRequest,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Scope } from "../../protocol/scopes.js";
import { estimateTokens } from "../../protocol/tool-envelope.js";
import { isIvoaiError } from "../../shared/errors.js";
import type { Logger } from "../../shared/logger.js";
import { requestHandlers } from "../../shared/mcp-sdk-handlers.js";
import type { ToolCallEvent } from "../audit/store.js";
import type { AuthenticatedClient } from "../enrollment/service.js";

/** The spec's "resource not found" error code (MCP, server/resources#error-handling). */
export const RESOURCE_NOT_FOUND = -32002;
/** Longer URIs are refused before anything is looked up. */
export const MAX_RESOURCE_URI_CHARS = 2048;
/** Resources per resources/list page. */
export const RESOURCE_PAGE_SIZE = 100;
/** Values per completion answer (the spec's cap). */
export const MAX_COMPLETION_VALUES = 100;
/** The `_meta` key telling a client the text is untrusted data. */
export const UNTRUSTED_META = "ivoai/untrusted";

/** Who asks (the endpoint's ToolContext has this shape). */
export interface ResourceContext {
  client: AuthenticatedClient;
  sessionId: string | null;
  project: string | null;
}

/** One entry of resources/list. */
export type ListedResource = Pick<
  Resource,
  "uri" | "name" | "title" | "description" | "mimeType" | "size" | "annotations"
>;

/** A resource's content, as read. */
export interface ResourceBody {
  /** What a model reads; untrusted text must already carry its notice. */
  text: string;
  mimeType: string;
  untrusted: boolean;
  /** Extra `_meta` for the content (title, version, truncation…). */
  meta?: Record<string, unknown>;
}

export interface Completions {
  values: string[];
  /** How many values match in all (may exceed the values returned). */
  total: number;
}

/** A family of resources under one URI template (`{x}`: one segment, `{+x}`: a path). */
export interface ResourceSpec {
  name: string;
  /** e.g. `ivoai://context/{source}/{+path}`; variables are percent-decoded before `read` sees them. */
  template: string;
  /** The scope a credential needs to list, read or complete these. */
  scope: Scope;
  title: string;
  description: string;
  mimeType: string;
  /** At most `limit` resources after the spec's own keyset position `after`, and the position to go on from. */
  list(
    after: string | undefined,
    limit: number,
    context: ResourceContext,
  ): Promise<{ resources: ListedResource[]; next?: string }>;
  /** The resource the variables name, or undefined when there is none. A USAGE error means a bad address. */
  read(variables: Record<string, string>, context: ResourceContext): Promise<ResourceBody | undefined>;
  /** Completers per variable: `chosen` holds the variables already chosen (decoded). */
  complete: Record<
    string,
    (value: string, chosen: Record<string, string>, context: ResourceContext) => Promise<Completions>
  >;
}

export interface ResourceRegistration {
  /** The endpoint's name, for the audit log. */
  endpoint: string;
  /** Every spec of the endpoint (to tell a scope refusal from an unknown URI). */
  all: readonly ResourceSpec[];
  /** The specs this caller may use. */
  offered: readonly ResourceSpec[];
  context: ResourceContext;
  maxResultChars: number;
  record(event: ToolCallEvent): void;
  logger: Logger;
}

/** The handler the SDK installed for a method, to delegate what is not ours (fixed resources such as Web MCP's
 * skill, prompt completion). */
const sdkHandler = (server: McpServer, method: string) => requestHandlers(server.server)?.get(method);

/**
 * Registers the offered specs on a per-request server (no I/O: it runs for every request) and answers
 * resources/list, resources/read and completion/complete for them.
 */
export function registerResources(server: McpServer, options: ResourceRegistration): void {
  const { offered, context } = options;
  if (offered.length === 0) return;
  for (const spec of offered) {
    const template = compiledTemplate(spec);
    server.registerResource(
      spec.name,
      new ResourceTemplate(spec.template, {
        list: undefined,
        // Answered by the completion handler below; registered so that the SDK announces completions.
        complete: Object.fromEntries(template.names.map((name) => [name, () => []])),
      }),
      { title: spec.title, description: spec.description, mimeType: spec.mimeType },
      // Reached only through the SDK's read, i.e. for a URI that its URL parser rewrote into this template.
      () => {
        throw new McpError(ErrorCode.InvalidParams, "invalid resource URI: not in its plain form");
      },
    );
  }
  // Stateless endpoints (one server per request) cannot send notifications/resources/list_changed.
  server.server.registerCapabilities({ resources: { listChanged: false } });

  const fixedList = sdkHandler(server, "resources/list");
  const fixedRead = sdkHandler(server, "resources/read");
  const otherCompletion = sdkHandler(server, "completion/complete");

  server.server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
    listResources(request, () => fixedList?.(request, extra) as Promise<ListResourcesResult> | undefined),
  );
  server.server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(request, () => fixedRead?.(request, extra) as Promise<ReadResourceResult> | undefined),
  );
  server.server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    complete(request, () => otherCompletion?.(request, extra) as Promise<CompleteResult> | undefined),
  );

  async function listResources(
    request: ListResourcesRequest,
    fixed: () => Promise<ListResourcesResult> | undefined,
  ): Promise<ListResourcesResult> {
    const cursor = request.params?.cursor;
    const position = cursor === undefined ? { index: 0 } : decodeCursor(cursor, offered);
    const resources: Resource[] = [];
    // The endpoint's fixed resources (e.g. the skill) open the first page.
    if (cursor === undefined) resources.push(...((await fixed())?.resources ?? []));
    for (let index = position.index; index < offered.length; index++) {
      const spec = offered[index] as ResourceSpec;
      const after = index === position.index ? position.after : undefined;
      const room = RESOURCE_PAGE_SIZE - resources.length;
      if (room <= 0) return { resources, nextCursor: encodeCursor(spec.name, after) };
      let page: Awaited<ReturnType<ResourceSpec["list"]>>;
      try {
        page = await spec.list(after, room, context);
      } catch (error) {
        if (isIvoaiError(error) && error.code === "USAGE") throw invalidCursor();
        throw error;
      }
      resources.push(...page.resources.slice(0, room).map((entry) => ({ ...entry })));
      if (page.next !== undefined) return { resources, nextCursor: encodeCursor(spec.name, page.next) };
    }
    return { resources };
  }

  async function readResource(
    request: ReadResourceRequest,
    fixed: () => Promise<ReadResourceResult> | undefined,
  ): Promise<ReadResourceResult> {
    const started = performance.now();
    const uri = request.params.uri;
    let status: ToolCallEvent["status"] = "FAILED";
    let tokens = 0;
    let detail: Record<string, unknown> = { uri: uri.slice(0, 512) };
    try {
      const target = matchUri(uri, options.all);
      if (!target) {
        const answer = await fixedOrNotFound(uri, fixed);
        status = "SUCCESS";
        return answer;
      }
      if (!offered.includes(target.spec)) {
        status = "REJECTED";
        detail = { ...detail, rejected: "insufficient_scope" };
        throw new McpError(
          ErrorCode.InvalidParams,
          `insufficient_scope: ${target.spec.name} resources need ${target.spec.scope}`,
        );
      }
      let body: ResourceBody | undefined;
      try {
        body = await target.spec.read(target.variables, context);
      } catch (error) {
        if (isIvoaiError(error) && error.code === "USAGE") {
          status = "REJECTED";
          detail = { ...detail, rejected: "invalid_uri" };
          throw new McpError(ErrorCode.InvalidParams, `invalid resource URI: ${error.message}`);
        }
        if (isIvoaiError(error) && error.code === "NOT_FOUND") body = undefined;
        else throw error;
      }
      if (!body) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${bounded(uri)}`, { uri });
      tokens = estimateTokens(body.text);
      if (body.text.length > options.maxResultChars) {
        detail = { ...detail, error: "result_too_large" };
        throw new McpError(
          ErrorCode.InvalidRequest,
          `result_too_large: the resource has ${body.text.length} characters; this endpoint returns at most ${options.maxResultChars}`,
        );
      }
      status = "SUCCESS";
      return {
        contents: [
          {
            uri,
            mimeType: body.mimeType,
            text: body.text,
            _meta: { ...body.meta, [UNTRUSTED_META]: body.untrusted },
          },
        ],
      };
    } catch (error) {
      if (error instanceof McpError) {
        if (error.code === ErrorCode.InvalidParams && status !== "REJECTED") {
          status = "REJECTED";
          detail = { ...detail, rejected: "invalid_uri" };
        }
        detail = { ...detail, message: error.message.slice(0, 1000) };
        throw error;
      }
      options.logger.error("resource read failed", {
        uri: bounded(uri),
        error: error instanceof Error ? error.message : String(error),
      });
      detail = { ...detail, error: "the read failed" };
      throw new McpError(ErrorCode.InternalError, "the resource could not be read");
    } finally {
      options.record({
        kind: "tool_call",
        tool: "resources/read",
        endpoint: options.endpoint,
        credential_id: context.client.id,
        session_id: context.sessionId,
        tier: "read",
        status,
        latency_ms: Math.round(performance.now() - started),
        tokens_consumed: tokens,
        guardrail_checked: true,
        detail,
      });
    }
  }

  async function complete(
    request: CompleteRequest,
    other: () => Promise<CompleteResult> | undefined,
  ): Promise<CompleteResult> {
    const { ref, argument } = request.params;
    const spec = ref.type === "ref/resource" ? offered.find((s) => s.template === ref.uri) : undefined;
    if (!spec) {
      const answer = other();
      if (answer) return answer;
      const named = ref.type === "ref/resource" ? ref.uri : ref.name;
      throw new McpError(ErrorCode.InvalidParams, `${bounded(named)} not found`);
    }
    // The argument name is the caller's text: only the spec's own completers, never an inherited property.
    const completer = Object.hasOwn(spec.complete, argument.name) ? spec.complete[argument.name] : undefined;
    const value = leniently(argument.value);
    if (!completer || value === undefined) return { completion: { values: [], total: 0, hasMore: false } };
    const chosen: Record<string, string> = Object.create(null);
    for (const [name, raw] of Object.entries(request.params.context?.arguments ?? {})) {
      const decoded = leniently(raw);
      if (decoded !== undefined) chosen[name] = decoded;
    }
    let completions: Completions;
    try {
      completions = await completer(value, chosen, context);
    } catch (error) {
      // A value the store refuses (a NUL, say) is the caller's mistake; anything else is logged, not echoed.
      if (isIvoaiError(error) && error.code === "USAGE")
        throw new McpError(ErrorCode.InvalidParams, `invalid completion value: ${error.message}`);
      options.logger.error("resource completion failed", {
        template: spec.template,
        argument: argument.name.slice(0, 128),
        error: error instanceof Error ? error.message : String(error),
      });
      throw new McpError(ErrorCode.InternalError, "the completion failed");
    }
    const { values, total } = completions;
    const shown = values.slice(0, MAX_COMPLETION_VALUES);
    return { completion: { values: shown, total, hasMore: total > shown.length } };
  }
}

/** A URI that no template names: a fixed resource of the endpoint, else not found (-32002, as the spec says). */
async function fixedOrNotFound(
  uri: string,
  fixed: () => Promise<ReadResourceResult> | undefined,
): Promise<ReadResourceResult> {
  const notFound = () => new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${bounded(uri)}`, { uri });
  if (uri.length > MAX_RESOURCE_URI_CHARS) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `resource URIs are limited to ${MAX_RESOURCE_URI_CHARS} characters`,
    );
  }
  try {
    const answer = fixed();
    if (!answer) throw notFound();
    return await answer;
  } catch (error) {
    // The SDK's own "not found" is InvalidParams; the spec's code is clearer to a client.
    if (
      error instanceof McpError &&
      error.code === ErrorCode.InvalidParams &&
      /not found/i.test(error.message)
    )
      throw notFound();
    if (error instanceof TypeError) throw notFound(); // new URL() refused it: no fixed resource has that URI
    throw error;
  }
}

interface CompiledTemplate {
  /** The literal text before the first variable (e.g. `ivoai://context/`). */
  prefix: string;
  pattern: RegExp;
  names: string[];
}

const compiled = new WeakMap<ResourceSpec, CompiledTemplate>();
function compiledTemplate(spec: ResourceSpec): CompiledTemplate {
  let template = compiled.get(spec);
  if (!template) {
    template = compileTemplate(spec.template);
    compiled.set(spec, template);
  }
  return template;
}

/** `{x}` matches one segment, `{+x}` the rest (RFC 6570 levels 1 and 2, the only forms ivoai uses). */
export function compileTemplate(template: string): CompiledTemplate {
  const names: string[] = [];
  let source = "^";
  let last = 0;
  for (const match of template.matchAll(/\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    const [whole, plus, name] = match as unknown as [string, string, string];
    source += escapeRegExp(template.slice(last, match.index));
    source += plus ? "(.+)" : "([^/]+)";
    names.push(name);
    last = (match.index ?? 0) + whole.length;
  }
  source += `${escapeRegExp(template.slice(last))}$`;
  const first = template.indexOf("{");
  return {
    prefix: first < 0 ? template : template.slice(0, first),
    pattern: new RegExp(source, "s"),
    names,
  };
}

/**
 * The spec a URI belongs to and its decoded variables; undefined when no template's prefix fits. A URI under a
 * template that fails its checks (too long, not matching, bad escapes, `..` or empty segments, NUL or other
 * control characters, backslashes) is InvalidParams: never normalised into another address. A `%2F` decodes to
 * a `/` (scopes such as `git:acme/api` hold one); each spec refuses what its own names cannot hold.
 */
export function matchUri(
  uri: string,
  specs: readonly ResourceSpec[],
): { spec: ResourceSpec; variables: Record<string, string> } | undefined {
  const lower = uri.slice(0, 64).toLowerCase();
  const spec = specs.find((candidate) => lower.startsWith(compiledTemplate(candidate).prefix.toLowerCase()));
  if (!spec) return undefined;
  const refuse = (why: string) => new McpError(ErrorCode.InvalidParams, `invalid resource URI: ${why}`);
  if (uri.length > MAX_RESOURCE_URI_CHARS)
    throw refuse(`resource URIs are limited to ${MAX_RESOURCE_URI_CHARS} characters`);
  const template = compiledTemplate(spec);
  // The scheme and authority are case-insensitive; the rest is matched as given.
  const match = template.pattern.exec(template.prefix + uri.slice(template.prefix.length));
  if (!match) throw refuse(`expected ${spec.template}`);
  const variables: Record<string, string> = {};
  for (const [index, name] of template.names.entries()) {
    const raw = match[index + 1] as string;
    let value: string;
    try {
      value = decodeURIComponent(raw);
    } catch {
      throw refuse(`bad percent-encoding in ${name}`);
    }
    if (/\p{Cc}/u.test(value)) throw refuse(`control character in ${name}`);
    if (value.includes("\\")) throw refuse(`backslash in ${name}`);
    if (value.split("/").some((segment) => segment === "" || segment === "." || segment === ".."))
      throw refuse(`empty, "." or ".." segment in ${name}`);
    variables[name] = value;
  }
  return { spec, variables };
}

/** Builds a URI from a spec's template (each path segment percent-encoded). */
export function expandTemplate(template: string, variables: Record<string, string>): string {
  return template.replace(/\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}/g, (_whole, plus: string, name: string) => {
    const value = variables[name] ?? "";
    return plus ? value.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(value);
  });
}

const cursorSchema = z.strictObject({ s: z.string().max(128), a: z.string().max(4096).optional() });

function encodeCursor(spec: string, after: string | undefined): string {
  return Buffer.from(JSON.stringify(after === undefined ? { s: spec } : { s: spec, a: after })).toString(
    "base64url",
  );
}

function decodeCursor(cursor: string, offered: readonly ResourceSpec[]): { index: number; after?: string } {
  if (cursor.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let parsed: z.infer<typeof cursorSchema>;
  try {
    parsed = cursorSchema.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw invalidCursor();
  }
  const index = offered.findIndex((spec) => spec.name === parsed.s);
  if (index < 0) throw invalidCursor();
  return parsed.a === undefined ? { index } : { index, after: parsed.a };
}

function invalidCursor(): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    "invalid cursor: pass the nextCursor of the previous resources/list page unchanged",
  );
}

/** A completion value as typed: percent-decoded when it decodes, undefined when absurdly long. */
function leniently(value: string): string | undefined {
  if (value.length > 1024) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function bounded(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
