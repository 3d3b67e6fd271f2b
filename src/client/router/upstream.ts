// One persistent MCP client per source and endpoint, with a per-call deadline and a circuit breaker: the
// pool's interface and its calls. The state and the guarded call they all go through are in upstream-state.ts.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type {
  CallToolResult,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ListToolsResult,
  LoggingLevel,
  LoggingMessageNotification,
  ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Source } from "./selection.js";
import {
  closePool,
  createPoolState,
  type EndpointName,
  guarded,
  isOpenAt,
  offered,
  type PoolState,
  UpstreamError,
  type UpstreamLimits,
} from "./upstream-state.js";

export {
  type EndpointName,
  UpstreamAnswer,
  UpstreamError,
  type UpstreamLimits,
} from "./upstream-state.js";

export interface UpstreamPool {
  callTool(
    source: Source,
    endpoint: EndpointName,
    name: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult>;
  listTools(source: Source, endpoint: EndpointName): Promise<ListToolsResult>;
  /**
   * The surface beyond tools. An upstream that does not offer the capability answers empty (list) or
   * `undefined` (read, get, complete); a JSON-RPC error it answers (not found, bad cursor) is rethrown as an
   * `UpstreamAnswer` and does not count against its circuit: the server is healthy, the thing is not there.
   */
  listResources(source: Source, endpoint: EndpointName, cursor?: string): Promise<ListResourcesResult>;
  listResourceTemplates(source: Source, endpoint: EndpointName): Promise<ListResourceTemplatesResult>;
  readResource(source: Source, endpoint: EndpointName, uri: string): Promise<ReadResourceResult | undefined>;
  listPrompts(source: Source, endpoint: EndpointName): Promise<ListPromptsResult>;
  getPrompt(
    source: Source,
    endpoint: EndpointName,
    name: string,
    args: Record<string, string>,
  ): Promise<GetPromptResult | undefined>;
  complete(
    source: Source,
    endpoint: EndpointName,
    params: CompleteRequest["params"],
  ): Promise<CompleteResult | undefined>;
  /** Sets the upstream's log level for this session; false when it offers no logging. */
  setLoggingLevel(source: Source, endpoint: EndpointName, level: LoggingLevel): Promise<boolean>;
  /** Receives every `notifications/message` an upstream sends, with the source it came from. */
  onLogMessage(
    listener: (source: Source, endpoint: EndpointName, message: LoggingMessageNotification["params"]) => void,
  ): void;
  isOpen(source: Source): boolean;
  /**
   * Closes every upstream session, waiting at most `graceMs`: a session still connecting to a stalled upstream
   * is closed when (if ever) its connection settles, and the pool makes no new connection after this.
   */
  close(graceMs: number): Promise<void>;
}

/** Upstream lists are followed page by page up to this many pages (templates, prompts: a handful each). */
const MAX_LIST_PAGES = 20;

export function createUpstreamPool(limits: UpstreamLimits, headers: Record<string, string>): UpstreamPool {
  const state = createPoolState(limits, headers);
  return {
    callTool: (source, endpoint, name, args) => callTool(state, source, endpoint, name, args),
    listTools: (source, endpoint) =>
      guarded(state, source, endpoint, (client) =>
        client.listTools(undefined, { timeout: limits.deadlineMs }),
      ),
    listResources: (source, endpoint, cursor) =>
      offered(state, source, endpoint, "resources", { resources: [] }, (client) =>
        client.listResources(pageParams(cursor), requestOptions(state)),
      ),
    listResourceTemplates: (source, endpoint) => listResourceTemplates(state, source, endpoint),
    readResource: (source, endpoint, uri) =>
      offered(state, source, endpoint, "resources", undefined, (client) =>
        client.readResource({ uri }, requestOptions(state)),
      ),
    listPrompts: (source, endpoint) => listPrompts(state, source, endpoint),
    getPrompt: (source, endpoint, name, args) =>
      offered(state, source, endpoint, "prompts", undefined, (client) =>
        client.getPrompt({ name, arguments: args }, requestOptions(state)),
      ),
    complete: (source, endpoint, params) =>
      offered(state, source, endpoint, "completions", undefined, (client) =>
        client.complete(params, requestOptions(state)),
      ),
    setLoggingLevel: (source, endpoint, level) => setLoggingLevel(state, source, endpoint, level),
    onLogMessage: (listener) => {
      state.logListeners.push(listener);
    },
    isOpen: (source) => isOpenAt(state.failures, source.profile.id, Date.now()),
    close: (graceMs) => closePool(state, graceMs),
  };
}

function requestOptions(state: PoolState) {
  return { timeout: state.limits.deadlineMs };
}

function callTool(
  state: PoolState,
  source: Source,
  endpoint: EndpointName,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return guarded(state, source, endpoint, async (client) => {
    const result = await client.callTool({ name, arguments: args }, undefined, {
      timeout: state.limits.deadlineMs,
    });
    if (!Array.isArray(result.content))
      throw new UpstreamError("malformed", `${source.profile.alias}: result has no content`);
    return result as CallToolResult;
  });
}

/** Follows `list` from page to page, at most MAX_LIST_PAGES, gathering every page's items. */
async function everyPage<I>(
  list: (cursor: string | undefined) => Promise<{ items: readonly I[]; nextCursor?: string | undefined }>,
): Promise<I[]> {
  const items: I[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed = await list(cursor);
    items.push(...listed.items);
    cursor = listed.nextCursor;
    if (!cursor) break;
  }
  return items;
}

const pageParams = (cursor: string | undefined) => (cursor === undefined ? undefined : { cursor });

function listResourceTemplates(
  state: PoolState,
  source: Source,
  endpoint: EndpointName,
): Promise<ListResourceTemplatesResult> {
  return offered(state, source, endpoint, "resources", { resourceTemplates: [] }, async (client: Client) => ({
    resourceTemplates: await everyPage(async (cursor) => {
      const listed = await client.listResourceTemplates(pageParams(cursor), requestOptions(state));
      return { items: listed.resourceTemplates, nextCursor: listed.nextCursor };
    }),
  }));
}

function listPrompts(state: PoolState, source: Source, endpoint: EndpointName): Promise<ListPromptsResult> {
  return offered(state, source, endpoint, "prompts", { prompts: [] }, async (client: Client) => ({
    prompts: await everyPage(async (cursor) => {
      const listed = await client.listPrompts(pageParams(cursor), requestOptions(state));
      return { items: listed.prompts, nextCursor: listed.nextCursor };
    }),
  }));
}

function setLoggingLevel(
  state: PoolState,
  source: Source,
  endpoint: EndpointName,
  level: LoggingLevel,
): Promise<boolean> {
  return offered(state, source, endpoint, "logging", false, async (client) => {
    await client.setLoggingLevel(level, requestOptions(state));
    return true;
  });
}
