// The memory MCP tools: reads answer at once; writes, feedback and deletions become approval requests.
import { z } from "zod";
import { approvalActionSchema, approvalStatusSchema, nullable } from "../../protocol/tool-envelope.js";
import { IvoaiError } from "../../shared/errors.js";
import type { ApprovalGate, Proposal } from "../approvals/gate.js";
import { defineTool, type ToolContext, type ToolSpec } from "../mcp/endpoint.js";
import { lineDiff } from "./diff.js";
import { GLOBAL_SCOPE, normalizePagePath, normalizeScope } from "./page-path.js";
import { type PageInput, preparePageWrite } from "./page-write.js";
import type { MemorySearcher } from "./query.js";
import { writerSession } from "./session-term.js";
import { type EpisodeRecord, FEEDBACK_KINDS, type MemoryStore, type PageRecord } from "./store.js";

export const MEMORY_INSTRUCTIONS =
  "ivoai Memory: the organisation's shared operational memory. Query memory first, then ivoai context, and " +
  "the external web only when internal knowledge is missing, stale or insufficient. Writes, feedback and " +
  "deletions are never applied directly: they return PENDING_HUMAN_APPROVAL until a person approves them.";

const count = z.number().int().nonnegative();

/** What the memory tools say of a page (no body). */
const pageSchema = z.object({
  scope: z.string(),
  path: z.string(),
  title: z.string(),
  tags: z.array(z.string()),
  version: count,
  author: z.string(),
  updated_at: z.string(),
  expires_at: nullable(z.string()),
  feedback: z.object({ helpful: count, not_helpful: count, stale: count, wrong: count }),
  flagged: z.boolean().describe("Someone marked it stale or wrong"),
});

const queryOutput = z.object({
  query: z.string(),
  count,
  results: z.array(
    pageSchema.extend({
      score: z.number(),
      snippet: z.string(),
      via: z
        .array(z.enum(["lexical", "vector", "graph"]))
        .describe("How the page was found: its words, its meaning (an embedding model), or a linked page"),
      neighbour_of: z
        .object({ path: z.string(), type: z.string() })
        .optional()
        .describe("For a page found through the graph: the matching page it is linked with, and how"),
    }),
  ),
});

const recentOutput = z.object({ count, pages: z.array(pageSchema) });

const readPageOutput = z.object({
  page: pageSchema.extend({ relations: z.record(z.string(), z.array(z.string())), body: z.string() }),
  backlinks: z.array(z.object({ from: z.string(), type: z.string() })),
});

/** What memory_status reports (MemoryService.status). */
export const memoryStatusSchema = z.object({
  status: z.literal("healthy"),
  pages: count,
  versions: count,
  edges: count,
  episodes: count,
  pending_approvals: count,
  indexed_pages: count,
  last_sweep: nullable(z.string()),
});
export type MemoryStatus = z.infer<typeof memoryStatusSchema>;

const approvalStatusOutput = z.object({
  approval_id: z.string(),
  status: approvalStatusSchema,
  action: approvalActionSchema,
  scope: z.string(),
  path: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  decided_at: nullable(z.string()),
  reason: nullable(z.string()),
});

const episodeSchema = z.object({
  id: z.string(),
  session_id: z.string(),
  project: z.string(),
  kind: z.string(),
  recorded_at: z.string(),
  valid_from: nullable(z.string()),
  valid_to: nullable(z.string()),
  data: z.record(z.string(), z.json()).describe("What the hook recorded (JSON)"),
  credential_id: z.string(),
});
const episodesOutput = z.object({ count, events: z.array(episodeSchema) });

export interface MemoryToolsDeps {
  store: MemoryStore;
  searcher: MemorySearcher;
  gate: ApprovalGate;
  status(): Promise<MemoryStatus>;
}

const projectArg = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe("Project scope (default: the session's project); _global pages are always included in reads");
const scopeArg = z
  .enum(["project", "_global"])
  .optional()
  .describe("Where the page lives: the project (default when one is known) or _global");
const pathArg = z.string().min(1).max(512).describe("Page path, e.g. runbooks/deploy-billing");

/** The scopes a read sees: the caller's project (argument, else session header) plus _global. */
function readScopes(project: string | undefined, context: ToolContext): string[] {
  const chosen = project ?? context.project;
  return chosen ? [normalizeScope(chosen), GLOBAL_SCOPE] : [GLOBAL_SCOPE];
}

function writeScope(
  scope: "project" | "_global" | undefined,
  project: string | undefined,
  context: ToolContext,
): string {
  const chosen = project ?? context.project;
  if (scope === "_global" || (!scope && !chosen)) return GLOBAL_SCOPE;
  if (!chosen) throw new IvoaiError("USAGE", "scope project needs a project (argument or session)");
  return normalizeScope(chosen);
}

/** A page as tools (and the page's resource `_meta`) describe it: everything but its body. */
export const describePage = (page: PageRecord): z.infer<typeof pageSchema> => ({
  scope: page.scope,
  path: page.path,
  title: page.title,
  tags: page.tags,
  version: page.version,
  author: page.author,
  updated_at: page.updated_at,
  expires_at: page.expires_at,
  feedback: { ...page.feedback },
  flagged: page.feedback.stale + page.feedback.wrong > 0,
});

const describeEpisode = (event: EpisodeRecord): z.infer<typeof episodeSchema> => ({
  id: event.id,
  session_id: event.session_id,
  project: event.project,
  kind: event.kind,
  recorded_at: event.recorded_at,
  valid_from: event.valid_from,
  valid_to: event.valid_to,
  // Stored as JSON text and parsed back: JSON values by construction.
  data: event.data as Record<string, z.infer<ReturnType<typeof z.json>>>,
  credential_id: event.credential_id,
});

/** Finds a page in the caller's scopes, project first. */
async function findPage(
  store: MemoryStore,
  scopes: readonly string[],
  path: string,
): Promise<PageRecord | undefined> {
  for (const scope of scopes) {
    const page = await store.getPage(scope, path);
    if (page) return page;
  }
  return undefined;
}

/** The memory tools, reads first (their order is the order tools/list shows). */
export function createMemoryTools(deps: MemoryToolsDeps): ToolSpec[] {
  return [
    queryTool(deps),
    recentTool(deps),
    readPageTool(deps),
    statusTool(deps),
    approvalStatusTool(deps),
    episodesTool(deps),
    writePageTool(deps),
    feedbackTool(deps),
    deletePageTool(deps),
    promoteEpisodeTool(deps),
  ];
}

/** A result count argument: 1 to `max`, the tool's default when left out. */
const limitArg = (max: number) => z.number().int().min(1).max(max).optional();

/** The page at `rawPath` in the caller's read scopes (project first), or NOT_FOUND naming the normalised path. */
async function requirePage(
  store: MemoryStore,
  project: string | undefined,
  rawPath: string,
  context: ToolContext,
): Promise<PageRecord> {
  const path = normalizePagePath(rawPath);
  const page = await findPage(store, readScopes(project, context), path);
  if (!page) throw new IvoaiError("NOT_FOUND", `no memory page at ${path}`);
  return page;
}

function queryTool({ searcher }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_query",
    title: "Query shared memory",
    description:
      "Searches memory pages of the project and _global (lexical match fused with linked pages of the knowledge " +
      "graph). Returns paths, titles, snippets and flags; read a page with memory_read_page.",
    tier: "read",
    scope: "memory:read",
    input: {
      query: z.string().min(1).max(2000),
      project: projectArg,
      limit: limitArg(100).describe("Results (default 10)"),
    },
    output: queryOutput,
    async run(args, context) {
      const hits = await searcher.search(args.query, readScopes(args.project, context), args.limit ?? 10);
      const results = hits.map((hit) => ({
        ...describePage(hit.page),
        score: hit.score,
        snippet: hit.snippet,
        via: hit.via,
        ...(hit.neighbour_of
          ? { neighbour_of: { path: hit.neighbour_of.path, type: hit.neighbour_of.type } }
          : {}),
      }));
      const lines = results.map(
        (result, index) =>
          `${index + 1}. ${result.title} — ${result.scope}:${result.path}${result.flagged ? " [flagged stale/wrong]" : ""}` +
          `${result.neighbour_of ? ` (linked from ${result.neighbour_of.path})` : ""}\n   ${result.snippet}`,
      );
      return {
        data: { query: args.query, count: results.length, results },
        text: results.length === 0 ? `No memory pages match "${args.query}".` : lines.join("\n"),
      };
    },
  });
}

function recentTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_recent",
    title: "Recently changed memory pages",
    description:
      "Lists the most recently written pages of the project and _global, newest first (no bodies).",
    tier: "read",
    scope: "memory:read",
    input: { project: projectArg, limit: limitArg(100) },
    output: recentOutput,
    async run(args, context) {
      const pages = (await store.recentPages(readScopes(args.project, context), args.limit ?? 20)).map(
        describePage,
      );
      return {
        data: { count: pages.length, pages },
        text:
          pages.length === 0
            ? "No memory pages yet."
            : pages.map((p) => `- ${p.updated_at} ${p.scope}:${p.path} — ${p.title}`).join("\n"),
      };
    },
  });
}

function readPageTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_read_page",
    title: "Read a memory page",
    description:
      "Returns one page (project scope first, then _global) with its metadata, links and backlinks.",
    tier: "read",
    scope: "memory:read",
    input: { path: pathArg, project: projectArg },
    output: readPageOutput,
    async run(args, context) {
      const page = await requirePage(store, args.project, args.path, context);
      const backlinks = (await store.backlinks(page.scope, page.path)).map(({ from, type }) => ({
        from,
        type,
      }));
      return {
        data: { page: { ...describePage(page), relations: page.relations, body: page.body }, backlinks },
        text: `# ${page.title} (${page.scope}:${page.path}, version ${page.version})\n\n${page.body}`,
      };
    },
  });
}

function statusTool(deps: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_status",
    title: "Memory service status",
    description: "Counts of pages, versions, graph edges, episodes and pending approvals.",
    tier: "read",
    scope: "memory:read",
    input: {},
    output: memoryStatusSchema,
    async run() {
      const status = await deps.status();
      return { data: status, text: JSON.stringify(status) };
    },
  });
}

function approvalStatusTool({ gate }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_approval_status",
    title: "Status of a pending change",
    description:
      "Tells whether a write/feedback/delete request was approved (and applied), rejected, expired or conflicted.",
    tier: "read",
    scope: "memory:read",
    input: { approval_id: z.string().min(1).max(64) },
    output: approvalStatusOutput,
    async run(args, context) {
      const approval = await gate.get(args.approval_id);
      // A caller sees its own requests only; someone else's id looks like an unknown one.
      if (approval?.requester !== context.client.id) {
        throw new IvoaiError("NOT_FOUND", `no approval with id ${args.approval_id}`);
      }
      const data = {
        approval_id: approval.id,
        status: approval.status,
        action: approval.action,
        scope: approval.scope,
        path: approval.path,
        created_at: approval.created_at,
        expires_at: approval.expires_at,
        decided_at: approval.decided_at,
        reason: approval.reason,
      };
      return {
        data,
        text: `Approval ${approval.id}: ${approval.status}${approval.reason ? ` (${approval.reason})` : ""}`,
      };
    },
  });
}

function episodesTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_episodes",
    title: "Episodic memory of sessions",
    description:
      "Events recorded by agent lifecycle hooks with this credential. Isolated to one session unless scope is " +
      "project; as_of shows memory as it was at that moment.",
    tier: "read",
    scope: "memory:read",
    input: {
      session_id: z.string().min(1).max(128).optional(),
      scope: z.enum(["session", "project"]).optional(),
      project: projectArg,
      as_of: z.string().datetime({ offset: true }).optional(),
      limit: limitArg(500),
    },
    output: episodesOutput,
    async run(args, context) {
      const scope = args.scope ?? "session";
      const sessionId = args.session_id ?? context.sessionId ?? undefined;
      const project = args.project ?? context.project ?? undefined;
      if (scope === "session" && !sessionId)
        throw new IvoaiError("USAGE", "session scope needs a session_id");
      if (scope === "project" && !project) throw new IvoaiError("USAGE", "project scope needs a project");
      const events = await store.episodes({
        credential_id: context.client.id,
        ...(scope === "session" ? { session_id: sessionId as string } : { project: project as string }),
        as_of: new Date(args.as_of ?? Date.now()).toISOString(),
        limit: args.limit ?? 50,
      });
      return {
        data: { count: events.length, events: events.map(describeEpisode) },
        text:
          events.map((event) => `- ${event.recorded_at} [${event.session_id}] ${event.kind}`).join("\n") ||
          "No events.",
      };
    },
  });
}

function writePageTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_write_page",
    title: "Write a memory page (needs approval)",
    description:
      "Proposes creating or replacing a page (markdown, optional front matter: title, tags, relations, expires_at; " +
      "for what a session said or decided: speaker, entities, session (or thread) and date (or valid_from), which memory_query ranks by; " +
      "[[path]] links become graph edges). Returns PENDING_HUMAN_APPROVAL with a diff; nothing changes until a person approves.",
    tier: "write",
    scope: "memory:write",
    input: {
      path: pathArg,
      body: z
        .string()
        .min(1)
        .max(1024 * 1024),
      project: projectArg,
      scope: scopeArg,
      title: z.string().min(1).max(300).optional(),
      tags: z.array(z.string().min(1).max(64)).max(50).optional(),
      relations: z.record(z.string(), z.array(z.string().min(1).max(512)).max(100)).optional(),
      expires_at: z.string().datetime({ offset: true }).optional(),
    },
    async propose(args, context) {
      const input: PageInput = {
        scope: writeScope(args.scope, args.project, context),
        path: args.path,
        body: args.body,
        author: context.client.id,
        ...(context.sessionId ? { session: writerSession(context.client.id, context.sessionId) } : {}),
        ...(args.title ? { title: args.title } : {}),
        ...(args.tags ? { tags: args.tags } : {}),
        ...(args.relations ? { relations: args.relations } : {}),
        ...(args.expires_at ? { expires_at: args.expires_at } : {}),
      };
      return proposePageWrite(store, "memory_write_page", input, context, (write, current) =>
        current
          ? `Replace ${write.scope}:${write.path} (version ${current.version}) with a new version titled "${write.title}".`
          : `Create ${write.scope}:${write.path} titled "${write.title}".`,
      );
    },
  });
}

function feedbackTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_feedback",
    title: "Give feedback on a page (needs approval)",
    description:
      "Proposes helpful / not_helpful / stale / wrong feedback; it changes ranking and flags, never deletes.",
    tier: "write",
    scope: "memory:write",
    input: {
      path: pathArg,
      kind: z.enum(FEEDBACK_KINDS as [string, ...string[]]),
      project: projectArg,
      note: z.string().max(2000).optional(),
    },
    async propose(args, context) {
      const page = await requirePage(store, args.project, args.path, context);
      return {
        tool: "memory_feedback",
        action: "feedback",
        scope: page.scope,
        path: page.path,
        requester: context.client.id,
        session_id: context.sessionId,
        summary: `Mark ${page.scope}:${page.path} as ${args.kind}${args.note ? `: ${args.note}` : ""}.`,
        diff: "",
        payload: { kind: args.kind, note: args.note ?? null },
        base_version: page.version,
      };
    },
  });
}

function deletePageTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_delete_page",
    title: "Delete a memory page (needs approval)",
    description:
      "Proposes deleting one page by its exact normalised path; needs confirm: true. Earlier versions are kept.",
    tier: "write",
    scope: "memory:delete",
    input: { path: pathArg, project: projectArg, scope: scopeArg, confirm: z.literal(true) },
    async propose(args, context) {
      const path = normalizePagePath(args.path);
      if (path !== args.path)
        throw new IvoaiError("USAGE", `deletion needs the exact normalised path: ${path}`);
      const scope = writeScope(args.scope, args.project, context);
      const page = await store.getPage(scope, path);
      if (!page) throw new IvoaiError("NOT_FOUND", `no memory page at ${scope}:${path}`);
      return {
        tool: "memory_delete_page",
        action: "delete_page",
        scope,
        path,
        requester: context.client.id,
        session_id: context.sessionId,
        summary: `Delete ${scope}:${path} (version ${page.version}, "${page.title}").`,
        diff: lineDiff(page.body, ""),
        payload: {},
        base_version: page.version,
      };
    },
  });
}

function promoteEpisodeTool({ store }: MemoryToolsDeps): ToolSpec {
  return defineTool({
    name: "memory_promote_episode",
    title: "Promote a session event to a page (needs approval)",
    description:
      "Proposes writing an episode event this credential recorded (its id from memory_episodes) into a memory " +
      "page; goes through the approval gate.",
    tier: "write",
    scope: "memory:write",
    input: {
      event_id: z.string().min(1).max(64).describe("Event id from memory_episodes, e.g. evt_…"),
      path: pathArg,
      project: projectArg,
      scope: scopeArg,
    },
    async propose(args, context) {
      // Another credential's event reads exactly like an unknown one.
      const event = await store.getEpisode(args.event_id, context.client.id);
      if (!event) throw new IvoaiError("NOT_FOUND", `no episode event ${args.event_id}`);
      const body =
        `# Session ${event.session_id}: ${event.kind}\n\nRecorded ${event.recorded_at} in ${event.project}.\n\n` +
        `\`\`\`json\n${JSON.stringify(event.data, null, 2)}\n\`\`\`\n`;
      const input: PageInput = {
        scope: writeScope(args.scope, args.project ?? event.project, context),
        path: args.path,
        body,
        author: context.client.id,
        // The conversation the event happened in, whichever session promotes it.
        session: writerSession(event.credential_id, event.session_id),
      };
      return proposePageWrite(
        store,
        "memory_promote_episode",
        input,
        context,
        (write) => `Promote episode ${event.id} (${event.kind}) to ${write.scope}:${write.path}.`,
      );
    },
  });
}

/** A page write's proposal: the input normalised, its diff against the current version, and its summary. */
async function proposePageWrite(
  store: MemoryStore,
  tool: string,
  input: PageInput,
  context: ToolContext,
  summary: (write: ReturnType<typeof preparePageWrite>, current: PageRecord | undefined) => string,
): Promise<Proposal> {
  const write = preparePageWrite(input);
  const current = await store.getPage(write.scope, write.path);
  return pageProposal(tool, { ...input, path: write.path, scope: write.scope }, current, context, {
    summary: summary(write, current),
    diff: lineDiff(current?.body ?? "", write.body),
  });
}

function pageProposal(
  tool: string,
  input: PageInput,
  current: PageRecord | undefined,
  context: ToolContext,
  text: { summary: string; diff: string },
): Proposal {
  return {
    tool,
    action: "write_page",
    scope: input.scope,
    path: input.path,
    requester: context.client.id,
    session_id: context.sessionId,
    summary: text.summary,
    diff: text.diff,
    payload: { ...input },
    base_version: current?.version ?? 0,
  };
}
