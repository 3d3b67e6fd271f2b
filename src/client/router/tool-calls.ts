// Tools through the router's own MCP server: reads fan out over the groups and merge with provenance, a write
// goes to exactly one destination and is never retried, and the read-only capability sees read tools only.
import type { CallToolResult, ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { toolEntry } from "../../protocol/tools.js";
import { federate, provenanceOf, type SourceOutcome } from "./federation.js";
import { type MemberOutcome, readInGroup } from "./group-read.js";
import { type Access, groupsFor, type RouterState } from "./router-state.js";
import type { Source, SourceGroup } from "./selection.js";
import type { EndpointName } from "./upstream.js";

type Tool = ListToolsResult["tools"][number];

/**
 * One tools/call: a write to its one destination (or refused), a read of one logical source passed through,
 * or a read of several merged into the federated result.
 */
export async function callTool(
  state: RouterState,
  endpoint: EndpointName,
  name: string,
  args: Record<string, unknown>,
  access: Access,
): Promise<CallToolResult> {
  const groups = groupsFor(state.sources, endpoint);
  if (groups.every((group) => group.members.length === 0)) {
    return toolError(`no selected knowledge source serves ${endpoint}`);
  }
  if (!(await isReadOnly(state, endpoint, groups, name))) {
    return callWrite(state, endpoint, groups, name, args, access);
  }
  if (groups.length === 1) return callOneGroup(state, groups[0] as SourceGroup, endpoint, name, args);
  const outcomes = await Promise.all(groups.map((group) => readTool(state, group, endpoint, name, args)));
  return federate(name, outcomes);
}

/** The read-only capability's list holds read tools only; the full one sees everything listed. */
export async function listTools(
  state: RouterState,
  endpoint: EndpointName,
  access: Access,
): Promise<ListToolsResult> {
  const listed = await listAllTools(state, endpoint);
  if (access === "full") return listed;
  const groups = groupsFor(state.sources, endpoint);
  const reads: Tool[] = [];
  for (const tool of listed.tools) if (await isReadOnly(state, endpoint, groups, tool.name)) reads.push(tool);
  return { ...listed, tools: reads };
}

/**
 * Whether a tool only reads: the protocol's table decides for ivoai's own tools; a tool it does not know is a
 * read only when every source listing it annotates it readOnlyHint. Anything else is handled as a write
 * (one destination, never retried), so a new write tool can never be fanned out.
 */
async function isReadOnly(
  state: RouterState,
  endpoint: EndpointName,
  groups: readonly SourceGroup[],
  name: string,
): Promise<boolean> {
  const entry = toolEntry(name);
  if (entry) return entry.tier === "read";
  const listed: boolean[] = [];
  for (const group of groups) {
    for (const member of group.members) {
      try {
        const tool = (await state.pool.listTools(member, endpoint)).tools.find((item) => item.name === name);
        if (tool) listed.push(tool.annotations?.readOnlyHint === true);
        break;
      } catch {
        // The next member of the group may answer.
      }
    }
  }
  return listed.length > 0 && listed.every(Boolean);
}

/**
 * Why a write may not go ahead: the read-only capability only reads, and a write with several possible
 * destinations goes nowhere. Undefined when it may go to the one group's primary.
 */
export function writeRefusal(
  name: string,
  groups: readonly SourceGroup[],
  access: Access,
): string | undefined {
  if (access === "read") {
    return `READ_ONLY_WORKER: ${name} changes state and this session capability only reads; only the primary agent may propose writes`;
  }
  if (groups.length > 1) {
    return (
      `WRITE_DESTINATION=AMBIGUOUS: ${name} could go to ${groups.map((group) => group.members.map((m) => m.profile.alias).join("/")).join(", ")}; ` +
      "start the session with --knowledge-source naming one destination"
    );
  }
  return undefined;
}

async function callWrite(
  state: RouterState,
  endpoint: EndpointName,
  groups: readonly SourceGroup[],
  name: string,
  args: Record<string, unknown>,
  access: Access,
): Promise<CallToolResult> {
  const refusal = writeRefusal(name, groups, access);
  if (refusal) return toolError(refusal);
  const primary = (groups[0] as SourceGroup).members[0] as Source;
  try {
    // Never retried, never failed over: the outcome of a failed write is uncertain.
    return await state.pool.callTool(primary, endpoint, name, args);
  } catch (error) {
    return toolError(
      `write to ${primary.profile.alias} failed and was not retried (it may or may not have been recorded): ${(error as Error).message}`,
    );
  }
}

/**
 * One logical source (one server, or one redundancy group failing over): its answer passes through as the
 * upstream gave it (seed 001), naming the member that answered when the group has several.
 */
async function callOneGroup(
  state: RouterState,
  group: SourceGroup,
  endpoint: EndpointName,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const outcome = await readTool(state, group, endpoint, name, args);
  if (outcome.status !== "ok" || !outcome.result) {
    // Which source gave no answer, as a federated result says it (callers need not parse the text).
    const failed = { ...outcome.provenance, status: outcome.status, error: outcome.error ?? outcome.status };
    return {
      ...toolError(groupFailure(group, outcome)),
      _meta: { "ivoai/federation": { partial: true, sources: [failed] } },
    };
  }
  if (group.members.length === 1) return outcome.result;
  const source = {
    ...outcome.provenance,
    ...(outcome.failed_over_from ? { failed_over_from: outcome.failed_over_from } : {}),
  };
  return { ...outcome.result, _meta: { ...outcome.result._meta, "ivoai/source": source } };
}

/** Reads one group: members in priority order, skipping open circuits, failing over while time remains. */
async function readTool(
  state: RouterState,
  group: SourceGroup,
  endpoint: EndpointName,
  name: string,
  args: Record<string, unknown>,
): Promise<SourceOutcome> {
  const reader = { pool: state.pool, deadlineMs: state.limits.deadlineMs };
  const outcome = await readInGroup(reader, group, (member) =>
    state.pool.callTool(member, endpoint, name, args),
  );
  return sourceOutcome(outcome);
}

/** A group read as the federated result reports it. */
export function sourceOutcome(outcome: MemberOutcome<CallToolResult>): SourceOutcome {
  const provenance = provenanceOf(outcome.source);
  if (outcome.ok) {
    return {
      provenance,
      status: "ok",
      latency_ms: outcome.latencyMs,
      result: outcome.value,
      ...(outcome.failedOverFrom.length ? { failed_over_from: outcome.failedOverFrom } : {}),
    };
  }
  // A tool call is never made with answered errors on, so "answered" cannot happen here; it would be an error.
  const status = outcome.status === "answered" ? "error" : outcome.status;
  return { provenance, status, latency_ms: outcome.latencyMs, error: outcome.error };
}

/** The tools of an endpoint: one logical source's list as it is, or the union over several groups. */
async function listAllTools(state: RouterState, endpoint: EndpointName): Promise<ListToolsResult> {
  const groups = groupsFor(state.sources, endpoint);
  // One logical source: its list as it is (output schemas kept, since its results pass through).
  if (groups.length === 1) return listOneGroup(state, groups[0] as SourceGroup, endpoint);
  const lists: Tool[][] = [];
  for (const group of groups) {
    for (const member of group.members) {
      try {
        lists.push((await state.pool.listTools(member, endpoint)).tools);
        break;
      } catch {
        // Try the group's next member; a group that lists nothing just adds no tools.
      }
    }
  }
  return { tools: mergeToolLists(lists) };
}

/**
 * Several groups' tool lists as one: the first group listing a name wins it, output schemas are dropped
 * (federated results are one text item, so no single-source output schema is promised), sorted by name.
 */
export function mergeToolLists(lists: readonly (readonly Tool[])[]): Tool[] {
  const byName = new Map<string, Tool>();
  for (const list of lists) {
    for (const tool of list) {
      const { outputSchema: _schema, ...rest } = tool;
      if (!byName.has(tool.name)) byName.set(tool.name, rest);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The first member of the group, in priority order, that lists its tools; the last failure otherwise. */
async function listOneGroup(
  state: RouterState,
  group: SourceGroup,
  endpoint: EndpointName,
): Promise<ListToolsResult> {
  let failure: unknown;
  for (const member of group.members) {
    try {
      return await state.pool.listTools(member, endpoint);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/** Why one logical source gave no answer: the member's own error, or which members of its group were tried. */
export function groupFailure(group: SourceGroup, outcome: SourceOutcome): string {
  const message = outcome.error ?? outcome.status;
  if (group.members.length === 1) return message;
  const aliases = group.members.map((member) => member.profile.alias).join(", ");
  const name = group.members[0]?.profile.redundancy_group ?? group.key;
  return `no member of redundancy group ${name} (${aliases}) answered: ${message}`;
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}
