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
import { mcpErrorFor } from "./wire-error.js";

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
  /** The gateway's id of the HTTP request: a failure's answer names it, and the log line carries it. */
  requestId?: string;
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
  if (options.offered.length === 0) return;
  registerTemplates(server, options.offered);
  // Stateless endpoints (one server per request) cannot send notifications/resources/list_changed.
  server.server.registerCapabilities({ resources: { listChanged: false } });

  const fixedList = sdkHandler(server, "resources/list");
  const fixedRead = sdkHandler(server, "resources/read");
  const otherCompletion = sdkHandler(server, "completion/complete");
  server.server.setRequestHandler(ListResourcesRequestSchema, (request, extra) =>
    listResources(
      options,
      request,
      () => fixedList?.(request, extra) as Promise<ListResourcesResult> | undefined,
    ),
  );
  server.server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readResource(
      options,
      request,
      () => fixedRead?.(request, extra) as Promise<ReadResourceResult> | undefined,
    ),
  );
  server.server.setRequestHandler(CompleteRequestSchema, (request, extra) =>
    complete(
      options,
      request,
      () => otherCompletion?.(request, extra) as Promise<CompleteResult> | undefined,
    ),
  );
}

/** The SDK registers the templates: templates/list and the capabilities (completions included) are its. */
function registerTemplates(server: McpServer, offered: readonly ResourceSpec[]): void {
  for (const spec of offered) {
    const template = compiledTemplate(spec);
    server.registerResource(
      spec.name,
      new ResourceTemplate(spec.template, {
        list: undefined,
        // Answered by the completion handler; registered so that the SDK announces completions.
        complete: Object.fromEntries(template.names.map((name) => [name, () => []])),
      }),
      { title: spec.title, description: spec.description, mimeType: spec.mimeType },
      // Reached only through the SDK's read, i.e. for a URI that its URL parser rewrote into this template.
      () => {
        throw new McpError(ErrorCode.InvalidParams, "invalid resource URI: not in its plain form");
      },
    );
  }
}

/** One page of resources across the offered specs, from the position the cursor names. */
async function listResources(
  options: ResourceRegistration,
  request: ListResourcesRequest,
  fixed: () => Promise<ListResourcesResult> | undefined,
): Promise<ListResourcesResult> {
  const { offered, context } = options;
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
      // Anything but a bad position is answered by the wire's error policy (wire-error.ts, on every handler).
      if (isIvoaiError(error) && error.code === "USAGE") throw invalidCursor();
      throw error;
    }
    resources.push(...page.resources.slice(0, room).map((entry) => ({ ...entry })));
    if (page.next !== undefined) return { resources, nextCursor: encodeCursor(spec.name, page.next) };
  }
  return { resources };
}

/** What a read's audit event says, filled in as the read goes. */
interface ReadAudit {
  status: ToolCallEvent["status"];
  tokens: number;
  detail: Record<string, unknown>;
}

/** resources/read: a template's resource, else a fixed one; audited whatever happens. */
async function readResource(
  options: ResourceRegistration,
  request: ReadResourceRequest,
  fixed: () => Promise<ReadResourceResult> | undefined,
): Promise<ReadResourceResult> {
  const started = performance.now();
  const uri = request.params.uri;
  const audit: ReadAudit = { status: "FAILED", tokens: 0, detail: { uri: uri.slice(0, 512) } };
  try {
    const result = await readUri(options, uri, fixed, audit);
    audit.status = "SUCCESS";
    return result;
  } catch (error) {
    throw readFailure(options, uri, error, audit);
  } finally {
    const { context } = options;
    options.record({
      kind: "tool_call",
      tool: "resources/read",
      endpoint: options.endpoint,
      credential_id: context.client.id,
      session_id: context.sessionId,
      tier: "read",
      status: audit.status,
      latency_ms: Math.round(performance.now() - started),
      tokens_consumed: audit.tokens,
      guardrail_checked: true,
      detail: audit.detail,
    });
  }
}

async function readUri(
  options: ResourceRegistration,
  uri: string,
  fixed: () => Promise<ReadResourceResult> | undefined,
  audit: ReadAudit,
): Promise<ReadResourceResult> {
  const target = matchUri(uri, options.all);
  if (!target) return fixedOrNotFound(uri, fixed);
  if (!options.offered.includes(target.spec)) {
    audit.status = "REJECTED";
    audit.detail.rejected = "insufficient_scope";
    throw new McpError(
      ErrorCode.InvalidParams,
      `insufficient_scope: ${target.spec.name} resources need ${target.spec.scope}`,
    );
  }
  const body = await readBody(target, options.context, audit);
  if (!body) throw notFound(uri);
  audit.tokens = estimateTokens(body.text);
  if (body.text.length > options.maxResultChars) {
    audit.detail.error = "result_too_large";
    throw new McpError(
      ErrorCode.InvalidRequest,
      `result_too_large: the resource has ${body.text.length} characters; this endpoint returns at most ${options.maxResultChars}`,
    );
  }
  const meta = { ...body.meta, [UNTRUSTED_META]: body.untrusted };
  return { contents: [{ uri, mimeType: body.mimeType, text: body.text, _meta: meta }] };
}

/** The spec's read: a USAGE error is a bad address (refused), NOT_FOUND none; anything else fails the read. */
async function readBody(
  target: { spec: ResourceSpec; variables: Record<string, string> },
  context: ResourceContext,
  audit: ReadAudit,
): Promise<ResourceBody | undefined> {
  try {
    return await target.spec.read(target.variables, context);
  } catch (error) {
    if (isIvoaiError(error) && error.code === "USAGE") {
      audit.status = "REJECTED";
      audit.detail.rejected = "invalid_uri";
      throw new McpError(ErrorCode.InvalidParams, `invalid resource URI: ${error.message}`);
    }
    if (isIvoaiError(error) && error.code === "NOT_FOUND") return undefined;
    throw error;
  }
}

/** A read's failure as answered: a protocol error as it is, anything else by the wire's error policy. */
function readFailure(options: ResourceRegistration, uri: string, error: unknown, audit: ReadAudit): McpError {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams && audit.status !== "REJECTED") {
      audit.status = "REJECTED";
      audit.detail.rejected = "invalid_uri";
    }
    audit.detail.message = error.message.slice(0, 1000);
    return error;
  }
  audit.detail.error = "the read failed";
  return mcpErrorFor(error, {
    logger: options.logger,
    requestId: options.context.requestId,
    msg: "resource read failed",
    fields: { uri: bounded(uri) },
  });
}

/** completion/complete for a template's variable; other references go to the SDK's own handler. */
async function complete(
  options: ResourceRegistration,
  request: CompleteRequest,
  other: () => Promise<CompleteResult> | undefined,
): Promise<CompleteResult> {
  const { ref, argument } = request.params;
  const spec = ref.type === "ref/resource" ? options.offered.find((s) => s.template === ref.uri) : undefined;
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
  let completions: Completions;
  try {
    completions = await completer(value, chosenArguments(request), options.context);
  } catch (error) {
    // A value the store refuses (a NUL, say) is the caller's mistake; anything else follows the wire's policy.
    if (isIvoaiError(error) && error.code === "USAGE")
      throw new McpError(ErrorCode.InvalidParams, `invalid completion value: ${error.message}`);
    throw mcpErrorFor(error, {
      logger: options.logger,
      requestId: options.context.requestId,
      msg: "resource completion failed",
      fields: { template: spec.template, argument: argument.name.slice(0, 128) },
    });
  }
  const shown = completions.values.slice(0, MAX_COMPLETION_VALUES);
  return {
    completion: { values: shown, total: completions.total, hasMore: completions.total > shown.length },
  };
}

/** The variables already chosen, decoded (the caller's text: a record without a prototype). */
function chosenArguments(request: CompleteRequest): Record<string, string> {
  const chosen: Record<string, string> = Object.create(null);
  for (const [name, raw] of Object.entries(request.params.context?.arguments ?? {})) {
    const decoded = leniently(raw);
    if (decoded !== undefined) chosen[name] = decoded;
  }
  return chosen;
}

function notFound(uri: string): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${bounded(uri)}`, { uri });
}

/** A URI that no template names: a fixed resource of the endpoint, else not found (-32002, as the spec says). */
async function fixedOrNotFound(
  uri: string,
  fixed: () => Promise<ReadResourceResult> | undefined,
): Promise<ReadResourceResult> {
  if (uri.length > MAX_RESOURCE_URI_CHARS) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `resource URIs are limited to ${MAX_RESOURCE_URI_CHARS} characters`,
    );
  }
  try {
    const answer = fixed();
    if (!answer) throw notFound(uri);
    return await answer;
  } catch (error) {
    // The SDK's own "not found" is InvalidParams; the spec's code is clearer to a client.
    if (
      error instanceof McpError &&
      error.code === ErrorCode.InvalidParams &&
      /not found/i.test(error.message)
    )
      throw notFound(uri);
    if (error instanceof TypeError) throw notFound(uri); // new URL() refused it: no fixed resource has that URI
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
