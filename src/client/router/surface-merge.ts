// The federated surface's rules as pure functions over what the groups answered: which source wins a name,
// how each entry names its source, how resources/list pages across groups, and what a failure says.
import {
  type CompleteRequest,
  type CompleteResult,
  ErrorCode,
  type ListResourcesResult,
  type LoggingLevel,
  type LoggingMessageNotification,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { oneLine } from "../../shared/terminal-text.js";
import { type Provenance, provenanceOf } from "./federation.js";
import type { MemberOutcome } from "./group-read.js";
import type { Source, SourceGroup } from "./selection.js";
import type { UpstreamAnswer } from "./upstream.js";

/** Spec "Resource not found" (2025-06-18 §resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;
const MAX_COMPLETIONS = 100;
/** Upstream log messages kept for the next SSE answer; older ones are dropped. */
export const MAX_QUEUED_LOGS = 100;

const SEVERITY: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
};

/** The opaque resources/list cursor: which group is being paged, and that group's own cursor. */
const cursorSchema = z.object({ k: z.string(), c: z.string().optional() }).strict();
export type Cursor = z.infer<typeof cursorSchema>;

/** A source that could not be asked, as `_meta["ivoai/federation"].sources` lists it. */
export type SourceFailure = Provenance & { status: string; error: string };

type Sourced = { source: Source; failedOverFrom: string[] };
type WithMeta = { _meta?: Record<string, unknown> | undefined };

/** A caller's URI as an error message repeats it: cut, control characters escaped. */
export const shown = (uri: string) => oneLine(uri.length > 512 ? `${uri.slice(0, 512)}…` : uri);

/** Groups in the order their answers win: the primary's priority, then the group key. */
export function byPriority(groups: readonly SourceGroup[]): SourceGroup[] {
  return [...groups].sort(
    (a, b) =>
      (a.members[0]?.profile.priority ?? 0) - (b.members[0]?.profile.priority ?? 0) ||
      a.key.localeCompare(b.key),
  );
}

/** The groups that failed without an answer (down, timed out, circuit open); answered errors are not gaps. */
export function failuresOf(outcomes: readonly MemberOutcome<unknown>[]): SourceFailure[] {
  return outcomes.flatMap((outcome) =>
    outcome.ok || outcome.answer
      ? []
      : [{ ...provenanceOf(outcome.source), status: outcome.status, error: outcome.error }],
  );
}

/** `_meta["ivoai/source"]`: which member answered, and which it stood in for. */
export function sourceMeta(outcome: Sourced) {
  return {
    "ivoai/source": {
      ...provenanceOf(outcome.source),
      ...(outcome.failedOverFrom.length ? { failed_over_from: outcome.failedOverFrom } : {}),
    } satisfies Provenance & { failed_over_from?: string[] },
  };
}

/** The entry with its source added to its own `_meta`. */
export function withSource<E extends WithMeta>(entry: E, outcome: Sourced): E {
  return { ...entry, _meta: { ...entry._meta, ...sourceMeta(outcome) } };
}

/** Every answering source's entries, in priority order, the first source winning a key; each names its source. */
export function union<V, E extends WithMeta>(
  outcomes: readonly MemberOutcome<V>[],
  entries: (value: V) => readonly E[],
  key: (entry: E) => string,
): E[] {
  const byKey = new Map<string, E>();
  for (const outcome of outcomes) {
    if (!outcome.ok) continue;
    for (const entry of entries(outcome.value)) {
      if (!byKey.has(key(entry))) byKey.set(key(entry), withSource(entry, outcome));
    }
  }
  return [...byKey.values()];
}

/** These lists are answered whole; a cursor can only be one the router never issued. */
export function noCursor(cursor: string | undefined, method: string): void {
  if (cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, `invalid cursor for ${method}`);
}

/** A healthy upstream's own JSON-RPC error, passed on as it answered it. */
export function answeredError(answer: UpstreamAnswer): McpError {
  return new McpError(answer.code, answer.message, answer.data);
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

export function decodeCursor(text: string): Cursor | undefined {
  try {
    const parsed = cursorSchema.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Where a resources/list call starts: the first group, or the group and upstream cursor the router issued. */
export function startOfResources(
  ordered: readonly SourceGroup[],
  cursor: string | undefined,
): { index: number; upstreamCursor: string | undefined } {
  if (cursor === undefined) return { index: 0, upstreamCursor: undefined };
  const position = decodeCursor(cursor);
  const index = position ? ordered.findIndex((group) => group.key === position.k) : -1;
  if (!position || index < 0)
    throw new McpError(ErrorCode.InvalidParams, "invalid cursor for resources/list");
  return { index, upstreamCursor: position.c };
}

/**
 * One group's page of resources/list: its resources, each naming its source, and where the next page is (the
 * same group while it has more, else the following group). A group that refused its cursor (a standby that
 * pages differently) says so rather than being skipped silently.
 */
export function resourcePage(
  group: SourceGroup,
  outcome: MemberOutcome<ListResourcesResult>,
  following: SourceGroup | undefined,
): { resources: ListResourcesResult["resources"]; next: Cursor | undefined } {
  const next: Cursor | undefined = following ? { k: following.key } : undefined;
  if (!outcome.ok) {
    if (outcome.answer) throw answeredError(outcome.answer);
    return { resources: [], next };
  }
  const resources = outcome.value.resources.map((resource) => withSource(resource, outcome));
  const { nextCursor } = outcome.value;
  return { resources, next: nextCursor ? { k: group.key, c: nextCursor } : next };
}

/** A resources/list answer: the page, its cursor, and the sources that could not be asked. */
export function resourcesAnswer(
  resources: ListResourcesResult["resources"],
  next: Cursor | undefined,
  failures: readonly SourceFailure[],
): ListResourcesResult {
  return {
    resources,
    ...(next ? { nextCursor: encodeCursor(next) } : {}),
    ...(failures.length ? { _meta: { "ivoai/federation": { partial: true, sources: failures } } } : {}),
  };
}

/**
 * Why no group could read the resource: the first answered error (not found, with the sources that could not
 * be asked), else the unavailable sources, else plain not found.
 */
export function unreadResource(
  uri: string,
  answers: readonly UpstreamAnswer[],
  failures: readonly SourceFailure[],
): McpError {
  // Pool errors already start with the source's alias.
  const unavailable = failures.map((failure) => failure.error).join("; ");
  const first = answers[0];
  if (first) {
    const message = unavailable ? `${first.message} (not asked, unavailable: ${unavailable})` : first.message;
    return new McpError(first.code, message, first.data);
  }
  if (failures.length > 0) {
    return new McpError(ErrorCode.InternalError, `resource ${shown(uri)} could not be read: ${unavailable}`);
  }
  return new McpError(RESOURCE_NOT_FOUND, `Resource ${shown(uri)} not found`, { uri: shown(uri) });
}

/** The completion/complete error when no source has the prompt or template the reference names. */
export function unknownReference(ref: CompleteRequest["params"]["ref"]): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    ref.type === "ref/prompt" ? `Prompt ${ref.name} not found` : `Resource template ${ref.uri} not found`,
  );
}

/**
 * The merged completion of the sources asked: values deduplicated in priority order, cut at 100. When none
 * answered and one refused, its own error is the answer.
 */
export function mergeCompletions(
  asked: readonly MemberOutcome<CompleteResult | undefined>[],
): CompleteResult {
  const refused = asked.find((outcome) => !outcome.ok && outcome.answer);
  if (!asked.some((outcome) => outcome.ok) && refused && !refused.ok && refused.answer) {
    throw answeredError(refused.answer);
  }
  const values = new Set<string>();
  let hasMore = false;
  for (const outcome of asked) {
    if (!outcome.ok || !outcome.value) continue;
    for (const value of outcome.value.completion.values) values.add(value);
    if (outcome.value.completion.hasMore) hasMore = true;
  }
  const all = [...values];
  return {
    completion: {
      values: all.slice(0, MAX_COMPLETIONS),
      total: all.length,
      hasMore: hasMore || all.length > MAX_COMPLETIONS,
    },
  };
}

/** Whether a message at `level` passes the session's level (none set: nothing is relayed). */
export function passesLevel(level: LoggingLevel, sessionLevel: LoggingLevel | undefined): boolean {
  return sessionLevel !== undefined && SEVERITY[level] >= SEVERITY[sessionLevel];
}

/** An upstream log message as the router relays it: the logger prefixed with the source's alias. */
export function relayedLog(
  source: Source,
  message: LoggingMessageNotification["params"],
): LoggingMessageNotification["params"] {
  return { ...message, logger: `${source.profile.alias}${message.logger ? `/${message.logger}` : ""}` };
}
