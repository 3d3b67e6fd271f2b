// The MCP surface beyond tools when the router answers itself: resources, prompts, completion and logging
// federated over the selected sources, read the way tool reads are (priority order, failover within a group,
// the pool's deadlines and breaker), every answer naming the source it came from. The merge rules are pure
// functions in surface-merge.ts; here, the surface's state and the reads that feed them.

import {
  type CompleteRequest,
  type CompleteResult,
  ErrorCode,
  type GetPromptResult,
  type ListPromptsResult,
  type ListResourcesResult,
  type ListResourceTemplatesResult,
  type LoggingLevel,
  type LoggingMessageNotification,
  McpError,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { type MemberOutcome, readInGroup } from "./group-read.js";
import type { Source, SourceGroup } from "./selection.js";
import {
  answeredError,
  byPriority,
  failuresOf,
  MAX_QUEUED_LOGS,
  mergeCompletions,
  noCursor,
  passesLevel,
  relayedLog,
  resourcePage,
  resourcesAnswer,
  type SourceFailure,
  startOfResources,
  union,
  unknownReference,
  unreadResource,
  withSource,
} from "./surface-merge.js";
import type { EndpointName, UpstreamAnswer, UpstreamPool } from "./upstream.js";

export { byPriority, RESOURCE_NOT_FOUND } from "./surface-merge.js";

/** Empty upstream pages skipped in one resources/list answer before it returns an empty page with a cursor. */
const MAX_EMPTY_PAGES = 50;

type LogParams = LoggingMessageNotification["params"];

export interface SurfaceOptions {
  pool: UpstreamPool;
  groupsFor(endpoint: EndpointName): SourceGroup[];
  deadlineMs: number;
}

export interface FederatedSurface {
  listResources(endpoint: EndpointName, cursor: string | undefined): Promise<ListResourcesResult>;
  listResourceTemplates(
    endpoint: EndpointName,
    cursor: string | undefined,
  ): Promise<ListResourceTemplatesResult>;
  readResource(endpoint: EndpointName, uri: string): Promise<ReadResourceResult>;
  listPrompts(endpoint: EndpointName, cursor: string | undefined): Promise<ListPromptsResult>;
  getPrompt(endpoint: EndpointName, name: string, args: Record<string, string>): Promise<GetPromptResult>;
  complete(endpoint: EndpointName, params: CompleteRequest["params"]): Promise<CompleteResult>;
  setLevel(endpoint: EndpointName, level: LoggingLevel): Promise<void>;
  /** The level the session set on this endpoint, if any. */
  levelOf(endpoint: EndpointName): LoggingLevel | undefined;
  /** Upstream log messages received since the last call, at or above the session's level. */
  drainLogs(endpoint: EndpointName): LogParams[];
}

/** The surface's state: its options, and per endpoint the session's log level and the messages to relay. */
interface SurfaceState extends SurfaceOptions {
  readonly levels: Map<EndpointName, LoggingLevel>;
  readonly logs: Map<EndpointName, LogParams[]>;
}

export function createFederatedSurface(options: SurfaceOptions): FederatedSurface {
  const state: SurfaceState = {
    pool: options.pool,
    groupsFor: (endpoint) => options.groupsFor(endpoint),
    deadlineMs: options.deadlineMs,
    levels: new Map(),
    logs: new Map(),
  };
  options.pool.onLogMessage((source, endpoint, message) => queueLog(state, source, endpoint, message));
  return {
    listResources: (endpoint, cursor) => listResources(state, endpoint, cursor),
    listResourceTemplates: (endpoint, cursor) => listResourceTemplates(state, endpoint, cursor),
    readResource: (endpoint, uri) => readResource(state, endpoint, uri),
    listPrompts: (endpoint, cursor) => listPrompts(state, endpoint, cursor),
    getPrompt: (endpoint, name, args) => getPrompt(state, endpoint, name, args),
    complete: (endpoint, params) => complete(state, endpoint, params),
    setLevel: (endpoint, level) => setLevel(state, endpoint, level),
    levelOf: (endpoint) => state.levels.get(endpoint),
    drainLogs: (endpoint) => drainLogs(state, endpoint),
  };
}

function queueLog(state: SurfaceState, source: Source, endpoint: EndpointName, message: LogParams): void {
  if (!passesLevel(message.level, state.levels.get(endpoint))) return;
  const queue = state.logs.get(endpoint) ?? [];
  queue.push(relayedLog(source, message));
  if (queue.length > MAX_QUEUED_LOGS) queue.splice(0, queue.length - MAX_QUEUED_LOGS);
  state.logs.set(endpoint, queue);
}

function drainLogs(state: SurfaceState, endpoint: EndpointName): LogParams[] {
  const queue = state.logs.get(endpoint) ?? [];
  state.logs.delete(endpoint);
  return queue;
}

const groupsOf = (state: SurfaceState, endpoint: EndpointName) => byPriority(state.groupsFor(endpoint));

/** Every group at once; the outcomes come back in priority order, so the first success wins a merge. */
function everyGroup<T>(
  state: SurfaceState,
  endpoint: EndpointName,
  use: (source: Source) => Promise<T>,
): Promise<MemberOutcome<T>[]> {
  return Promise.all(groupsOf(state, endpoint).map((group) => readInGroup(state, group, use)));
}

/**
 * One merged list paged through the groups in priority order, skipping empty pages (at most MAX_EMPTY_PAGES
 * per answer). A first page no source could give is an error; later pages report the gap in _meta.
 */
async function listResources(
  state: SurfaceState,
  endpoint: EndpointName,
  cursor: string | undefined,
): Promise<ListResourcesResult> {
  const ordered = groupsOf(state, endpoint);
  let { index, upstreamCursor } = startOfResources(ordered, cursor);
  const failures: SourceFailure[] = [];
  let answered = false;
  for (let pages = 0; index < ordered.length; pages++) {
    const group = ordered[index] as SourceGroup;
    const asked = upstreamCursor;
    const outcome = await readInGroup(state, group, (source) =>
      state.pool.listResources(source, endpoint, asked),
    );
    const { resources, next } = resourcePage(group, outcome, ordered[index + 1]);
    if (outcome.ok) answered = true;
    failures.push(...failuresOf([outcome]));
    if (resources.length > 0 || !next || pages >= MAX_EMPTY_PAGES) {
      if (!answered && cursor === undefined && !next) {
        throw new McpError(
          ErrorCode.InternalError,
          `no knowledge source answered resources/list: ${failures.map((f) => f.error).join("; ")}`,
        );
      }
      return resourcesAnswer(resources, next, failures);
    }
    index = ordered.findIndex((candidate) => candidate.key === next.k);
    upstreamCursor = next.c;
  }
  return { resources: [] };
}

async function listResourceTemplates(
  state: SurfaceState,
  endpoint: EndpointName,
  cursor: string | undefined,
): Promise<ListResourceTemplatesResult> {
  noCursor(cursor, "resources/templates/list");
  const outcomes = await everyGroup(state, endpoint, (source) =>
    state.pool.listResourceTemplates(source, endpoint),
  );
  return {
    resourceTemplates: union(
      outcomes,
      (value) => value.resourceTemplates,
      (template) => template.uriTemplate,
    ),
  };
}

/** The first group in priority order that has the resource answers it; the groups are asked one by one. */
async function readResource(
  state: SurfaceState,
  endpoint: EndpointName,
  uri: string,
): Promise<ReadResourceResult> {
  const answers: UpstreamAnswer[] = [];
  const failures: SourceFailure[] = [];
  for (const group of groupsOf(state, endpoint)) {
    const outcome = await readInGroup(state, group, (source) =>
      state.pool.readResource(source, endpoint, uri),
    );
    if (outcome.ok && outcome.value) return withSource(outcome.value, outcome);
    if (!outcome.ok && outcome.answer) answers.push(outcome.answer);
    else failures.push(...failuresOf([outcome]));
  }
  throw unreadResource(uri, answers, failures);
}

async function listPrompts(
  state: SurfaceState,
  endpoint: EndpointName,
  cursor: string | undefined,
): Promise<ListPromptsResult> {
  noCursor(cursor, "prompts/list");
  const outcomes = await everyGroup(state, endpoint, (source) => state.pool.listPrompts(source, endpoint));
  return {
    prompts: union(
      outcomes,
      (value) => value.prompts,
      (prompt) => prompt.name,
    ),
  };
}

/** The first group in priority order that lists the prompt gets it. */
async function getPrompt(
  state: SurfaceState,
  endpoint: EndpointName,
  name: string,
  args: Record<string, string>,
): Promise<GetPromptResult> {
  const { pool } = state;
  for (const group of groupsOf(state, endpoint)) {
    const listed = await readInGroup(state, group, (source) => pool.listPrompts(source, endpoint));
    if (!listed.ok || !listed.value.prompts.some((prompt) => prompt.name === name)) continue;
    const outcome = await readInGroup(state, group, (source) => pool.getPrompt(source, endpoint, name, args));
    if (outcome.ok && outcome.value) return withSource(outcome.value, outcome);
    if (!outcome.ok && outcome.answer) throw answeredError(outcome.answer);
  }
  throw new McpError(ErrorCode.InvalidParams, `Prompt ${name} not found`);
}

/** Asks every source that has the referenced prompt or template, and merges their values. */
async function complete(
  state: SurfaceState,
  endpoint: EndpointName,
  params: CompleteRequest["params"],
): Promise<CompleteResult> {
  const { pool } = state;
  const { ref } = params;
  const has = async (source: Source) =>
    ref.type === "ref/prompt"
      ? (await pool.listPrompts(source, endpoint)).prompts.some((prompt) => prompt.name === ref.name)
      : (await pool.listResourceTemplates(source, endpoint)).resourceTemplates.some(
          (template) => template.uriTemplate === ref.uri,
        );
  const outcomes = await everyGroup(state, endpoint, async (source) =>
    (await has(source)) ? pool.complete(source, endpoint, params) : undefined,
  );
  const asked = outcomes.filter((outcome) => !outcome.ok || outcome.value !== undefined);
  if (asked.length === 0) throw unknownReference(ref);
  return mergeCompletions(asked);
}

async function setLevel(state: SurfaceState, endpoint: EndpointName, level: LoggingLevel): Promise<void> {
  state.levels.set(endpoint, level);
  state.logs.delete(endpoint);
  // Every member, standbys included, so a failover keeps the session's level; a member that is down
  // learns nothing (the breaker keeps this quick) and the router still filters what it relays.
  const members = state.groupsFor(endpoint).flatMap((group) => group.members);
  await Promise.allSettled(members.map((source) => state.pool.setLoggingLevel(source, endpoint, level)));
}
