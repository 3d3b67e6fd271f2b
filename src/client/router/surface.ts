// The MCP surface beyond tools when the router answers itself: resources, prompts, completion and logging
// federated over the selected sources, read the way tool reads are (priority order, failover within a group,
// the pool's deadlines and breaker), every answer naming the source it came from.

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
import { z } from "zod";
import { oneLine } from "../../shared/terminal-text.js";
import { failureStatus, type Provenance, provenanceOf } from "./federation.js";
import type { Source, SourceGroup } from "./selection.js";
import { type EndpointName, UpstreamAnswer, type UpstreamPool } from "./upstream.js";

/** Spec "Resource not found" (2025-06-18 §resources, error handling). */
export const RESOURCE_NOT_FOUND = -32002;
const MAX_COMPLETIONS = 100;
/** Empty upstream pages skipped in one resources/list answer before it returns an empty page with a cursor. */
const MAX_EMPTY_PAGES = 50;
/** Upstream log messages kept for the next SSE answer; older ones are dropped. */
const MAX_QUEUED_LOGS = 100;

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
type Cursor = z.infer<typeof cursorSchema>;

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
  drainLogs(endpoint: EndpointName): LoggingMessageNotification["params"][];
}

type MemberOutcome<T> =
  | { ok: true; value: T; source: Source; failedOverFrom: string[] }
  | { ok: false; answer?: UpstreamAnswer; source: Source; status: string; error: string };

/** A caller's URI as an error message repeats it: cut, control characters escaped. */
const shown = (uri: string) => oneLine(uri.length > 512 ? `${uri.slice(0, 512)}…` : uri);

/** Groups in the order their answers win: the primary's priority, then the group key. */
export function byPriority(groups: readonly SourceGroup[]): SourceGroup[] {
  return [...groups].sort(
    (a, b) =>
      (a.members[0]?.profile.priority ?? 0) - (b.members[0]?.profile.priority ?? 0) ||
      a.key.localeCompare(b.key),
  );
}

export function createFederatedSurface(options: SurfaceOptions): FederatedSurface {
  const { pool } = options;
  const levels = new Map<EndpointName, LoggingLevel>();
  const logs = new Map<EndpointName, LoggingMessageNotification["params"][]>();
  pool.onLogMessage((source, endpoint, message) => {
    const level = levels.get(endpoint);
    if (!level || SEVERITY[message.level] < SEVERITY[level]) return;
    const queue = logs.get(endpoint) ?? [];
    queue.push({
      ...message,
      logger: `${source.profile.alias}${message.logger ? `/${message.logger}` : ""}`,
    });
    if (queue.length > MAX_QUEUED_LOGS) queue.splice(0, queue.length - MAX_QUEUED_LOGS);
    logs.set(endpoint, queue);
  });

  /**
   * One group: members in priority order, skipping open circuits (but always trying the last one), failing
   * over on a broken member while time remains. An answered JSON-RPC error is the group's answer.
   */
  const inGroup = async <T>(
    group: SourceGroup,
    use: (source: Source) => Promise<T>,
  ): Promise<MemberOutcome<T>> => {
    const started = performance.now();
    const tried: string[] = [];
    let last: MemberOutcome<T> | undefined;
    for (const member of group.members) {
      if (performance.now() - started >= options.deadlineMs) break;
      if (pool.isOpen(member) && member !== group.members.at(-1)) {
        tried.push(member.profile.alias);
        continue;
      }
      try {
        return { ok: true, value: await use(member), source: member, failedOverFrom: tried };
      } catch (error) {
        if (error instanceof UpstreamAnswer) {
          return { ok: false, answer: error, source: member, status: "answered", error: error.message };
        }
        tried.push(member.profile.alias);
        last = { ok: false, source: member, status: failureStatus(error), error: (error as Error).message };
        if (last.status === "timeout") break;
      }
    }
    return (
      last ?? {
        ok: false,
        source: group.members[0] as Source,
        status: "circuit_open",
        error: "every member is failing",
      }
    );
  };

  const groups = (endpoint: EndpointName) => byPriority(options.groupsFor(endpoint));
  const failuresOf = (outcomes: readonly MemberOutcome<unknown>[]) =>
    outcomes.flatMap((outcome) =>
      outcome.ok || outcome.answer
        ? []
        : [{ ...provenanceOf(outcome.source), status: outcome.status, error: outcome.error }],
    );
  const sourceMeta = (outcome: { source: Source; failedOverFrom: string[] }) => ({
    "ivoai/source": {
      ...provenanceOf(outcome.source),
      ...(outcome.failedOverFrom.length ? { failed_over_from: outcome.failedOverFrom } : {}),
    } satisfies Provenance & { failed_over_from?: string[] },
  });
  const noCursor = (cursor: string | undefined, method: string) => {
    // These lists are answered whole; a cursor can only be one the router never issued.
    if (cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, `invalid cursor for ${method}`);
  };
  /** Every group at once; the outcomes come back in priority order, so the first success wins a merge. */
  const everyGroup = <T>(endpoint: EndpointName, use: (source: Source) => Promise<T>) =>
    Promise.all(groups(endpoint).map((group) => inGroup(group, use)));
  /** Every answering source's entries, in priority order, the first source winning a key; each names its source. */
  const union = <V, E extends { _meta?: Record<string, unknown> | undefined }>(
    outcomes: readonly MemberOutcome<V>[],
    entries: (value: V) => readonly E[],
    key: (entry: E) => string,
  ): E[] => {
    const byKey = new Map<string, E>();
    for (const outcome of outcomes) {
      if (!outcome.ok) continue;
      for (const entry of entries(outcome.value)) {
        if (!byKey.has(key(entry)))
          byKey.set(key(entry), { ...entry, _meta: { ...entry._meta, ...sourceMeta(outcome) } });
      }
    }
    return [...byKey.values()];
  };

  return {
    async listResources(endpoint, cursor) {
      const ordered = groups(endpoint);
      let position: Cursor | undefined;
      if (cursor !== undefined) {
        position = decodeCursor(cursor);
        if (!position || !ordered.some((group) => group.key === position?.k)) {
          throw new McpError(ErrorCode.InvalidParams, "invalid cursor for resources/list");
        }
      }
      let index = position ? ordered.findIndex((group) => group.key === position?.k) : 0;
      let upstreamCursor = position?.c;
      const failures: ReturnType<typeof failuresOf> = [];
      let answered = false;
      for (let pages = 0; index < ordered.length; pages++) {
        const group = ordered[index] as SourceGroup;
        const outcome = await inGroup(group, (source) =>
          pool.listResources(source, endpoint, upstreamCursor),
        );
        const following = ordered[index + 1];
        let next: Cursor | undefined = following ? { k: following.key } : undefined;
        const resources: ListResourcesResult["resources"] = [];
        if (outcome.ok) {
          answered = true;
          for (const resource of outcome.value.resources) {
            resources.push({ ...resource, _meta: { ...resource._meta, ...sourceMeta(outcome) } });
          }
          if (outcome.value.nextCursor) next = { k: group.key, c: outcome.value.nextCursor };
        } else if (outcome.answer) {
          // The group refused its own cursor (a standby that pages differently): say so, do not skip silently.
          throw new McpError(outcome.answer.code, outcome.answer.message, outcome.answer.data);
        } else {
          failures.push(...failuresOf([outcome]));
        }
        if (resources.length > 0 || !next || pages >= MAX_EMPTY_PAGES) {
          // A first page no source could give is an error; later pages report the gap in _meta.
          if (!answered && cursor === undefined && !next) {
            throw new McpError(
              ErrorCode.InternalError,
              `no knowledge source answered resources/list: ${failures.map((f) => f.error).join("; ")}`,
            );
          }
          return {
            resources,
            ...(next ? { nextCursor: encodeCursor(next) } : {}),
            ...(failures.length
              ? { _meta: { "ivoai/federation": { partial: true, sources: failures } } }
              : {}),
          };
        }
        index = ordered.findIndex((candidate) => candidate.key === next?.k);
        upstreamCursor = next.c;
      }
      return { resources: [] };
    },

    async listResourceTemplates(endpoint, cursor) {
      noCursor(cursor, "resources/templates/list");
      const outcomes = await everyGroup(endpoint, (source) => pool.listResourceTemplates(source, endpoint));
      return {
        resourceTemplates: union(
          outcomes,
          (value) => value.resourceTemplates,
          (template) => template.uriTemplate,
        ),
      };
    },

    async readResource(endpoint, uri) {
      const answers: UpstreamAnswer[] = [];
      const failures: ReturnType<typeof failuresOf> = [];
      for (const group of groups(endpoint)) {
        const outcome = await inGroup(group, (source) => pool.readResource(source, endpoint, uri));
        if (outcome.ok && outcome.value) {
          return { ...outcome.value, _meta: { ...outcome.value._meta, ...sourceMeta(outcome) } };
        }
        if (!outcome.ok && outcome.answer) answers.push(outcome.answer);
        else failures.push(...failuresOf([outcome]));
      }
      // Pool errors already start with the source's alias.
      const unavailable = failures.map((f) => f.error).join("; ");
      const first = answers[0];
      if (first) {
        // Not found everywhere that answered: the upstream's own error, and which sources could not be asked.
        throw new McpError(
          first.code,
          unavailable ? `${first.message} (not asked, unavailable: ${unavailable})` : first.message,
          first.data,
        );
      }
      if (failures.length > 0) {
        throw new McpError(
          ErrorCode.InternalError,
          `resource ${shown(uri)} could not be read: ${unavailable}`,
        );
      }
      throw new McpError(RESOURCE_NOT_FOUND, `Resource ${shown(uri)} not found`, { uri: shown(uri) });
    },

    async listPrompts(endpoint, cursor) {
      noCursor(cursor, "prompts/list");
      const outcomes = await everyGroup(endpoint, (source) => pool.listPrompts(source, endpoint));
      return {
        prompts: union(
          outcomes,
          (value) => value.prompts,
          (prompt) => prompt.name,
        ),
      };
    },

    async getPrompt(endpoint, name, args) {
      for (const group of groups(endpoint)) {
        const listed = await inGroup(group, (source) => pool.listPrompts(source, endpoint));
        if (!listed.ok || !listed.value.prompts.some((prompt) => prompt.name === name)) continue;
        const outcome = await inGroup(group, (source) => pool.getPrompt(source, endpoint, name, args));
        if (outcome.ok && outcome.value) {
          return { ...outcome.value, _meta: { ...outcome.value._meta, ...sourceMeta(outcome) } };
        }
        if (!outcome.ok && outcome.answer) {
          throw new McpError(outcome.answer.code, outcome.answer.message, outcome.answer.data);
        }
      }
      throw new McpError(ErrorCode.InvalidParams, `Prompt ${name} not found`);
    },

    async complete(endpoint, params) {
      const { ref } = params;
      const has = async (source: Source) =>
        ref.type === "ref/prompt"
          ? (await pool.listPrompts(source, endpoint)).prompts.some((prompt) => prompt.name === ref.name)
          : (await pool.listResourceTemplates(source, endpoint)).resourceTemplates.some(
              (template) => template.uriTemplate === ref.uri,
            );
      const outcomes = await everyGroup(endpoint, async (source) =>
        (await has(source)) ? pool.complete(source, endpoint, params) : undefined,
      );
      const asked = outcomes.filter((outcome) => !outcome.ok || outcome.value !== undefined);
      if (asked.length === 0) {
        throw new McpError(
          ErrorCode.InvalidParams,
          ref.type === "ref/prompt"
            ? `Prompt ${ref.name} not found`
            : `Resource template ${ref.uri} not found`,
        );
      }
      const refused = asked.find((outcome) => !outcome.ok && outcome.answer);
      if (!asked.some((outcome) => outcome.ok) && refused && !refused.ok && refused.answer) {
        throw new McpError(refused.answer.code, refused.answer.message, refused.answer.data);
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
    },

    async setLevel(endpoint, level) {
      levels.set(endpoint, level);
      logs.delete(endpoint);
      // Every member, standbys included, so a failover keeps the session's level; a member that is down
      // learns nothing (the breaker keeps this quick) and the router still filters what it relays.
      const members = options.groupsFor(endpoint).flatMap((group) => group.members);
      await Promise.allSettled(members.map((source) => pool.setLoggingLevel(source, endpoint, level)));
    },

    levelOf: (endpoint) => levels.get(endpoint),

    drainLogs(endpoint) {
      const queue = logs.get(endpoint) ?? [];
      logs.delete(endpoint);
      return queue;
    },
  };
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString("base64url");
}

function decodeCursor(text: string): Cursor | undefined {
  try {
    const parsed = cursorSchema.safeParse(JSON.parse(Buffer.from(text, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
