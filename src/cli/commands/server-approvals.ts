// `ivoai server approvals list|show|approve|reject` and `ivoai server audit`: the human side of APPROVAL_GATE.
// The operator at the local shell is not a credential, so it may approve any request, including an agent's.
import { userInfo } from "node:os";
import { loadServerConfig } from "../../config/server-config.js";
import { MAX_BULK_DECISION } from "../../protocol/approvals.js";
import { DEFAULT_APPROVAL_PAGE, MAX_APPROVAL_PAGE } from "../../server/approvals/gate.js";
import { AUDIT_KINDS, type AuditEvent, openAuditLogOn } from "../../server/audit/store.js";
import { type MemoryService, openMemoryService } from "../../server/memory/service.js";
import type { ApprovalStatus, ApprovalSummary } from "../../server/memory/store.js";
import { resolveStoreBackend } from "../../server/store/backend.js";
import { parseDuration } from "../../shared/duration.js";
import { IvoaiError } from "../../shared/errors.js";
import { createLogger } from "../../shared/logger.js";
import { shellQuote } from "../../shared/shell-quote.js";
import { oneLine } from "../../shared/terminal-text.js";
import { type CommandContext, type CommandSpec, type GroupSpec, stringOption } from "../command.js";
import { formatTable } from "../output.js";
import { renderApproval } from "./approval-render.js";
import { ROOT_OPTION, requireServerTree, treeCredentialNames } from "./server-common.js";

async function withMemory<T>(ctx: CommandContext, use: (memory: MemoryService) => Promise<T>): Promise<T> {
  const paths = await requireServerTree(ctx, ["memoryDir", "auditDir"]);
  const config = await loadServerConfig(paths.configFile);
  const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
  try {
    const memory = await openMemoryService({ paths, config, logger: createLogger({ level: "warn" }), audit });
    try {
      return await use(memory);
    } finally {
      await memory.close();
    }
  } finally {
    await audit.close();
  }
}

/** The ISO time DURATION (e.g. 1h, 7d) before now; a bad duration is a USAGE error naming the flag. */
function durationAgo(text: string): string {
  if (!/^\d+[smhd]$/.test(text))
    throw new IvoaiError("USAGE", `invalid --older-than '${text}': a duration such as 30m, 1h or 7d`);
  return new Date(Date.now() - parseDuration(text)).toISOString();
}

const STATUSES = ["pending", "applied", "rejected", "expired", "conflict", "all"] as const;

const listCommand: CommandSpec = {
  kind: "command",
  name: "list",
  summary: "List approval requests (pending by default), newest first, one page at a time",
  description:
    "Shows metadata only (no bodies or diffs; 'approvals show ID' gives the full request). When more requests " +
    "exist, the next page is one --cursor away (next_cursor with --json).",
  json: true,
  options: {
    ...ROOT_OPTION,
    status: {
      type: "string",
      value: "STATUS",
      choices: STATUSES,
      description: "which requests (default pending)",
    },
    limit: {
      type: "string",
      value: "N",
      description: `requests per page (1–${MAX_APPROVAL_PAGE}, default ${DEFAULT_APPROVAL_PAGE})`,
    },
    cursor: { type: "string", value: "C", description: "continue after the previous page (its next cursor)" },
    requester: {
      type: "string",
      value: "NAME|ID",
      description: "only requests of this client (its name or credential id)",
    },
    scope: { type: "string", value: "SCOPE", description: "only requests on pages of this scope" },
    tool: { type: "string", value: "TOOL", description: "only requests made with this tool" },
    search: { type: "string", value: "TEXT", description: "only requests whose summary or path holds TEXT" },
    "older-than": {
      type: "string",
      value: "DURATION",
      description: "only requests made more than DURATION ago (e.g. 1h, 7d)",
    },
  },
  async run(ctx) {
    const status = stringOption(ctx.options, "status") ?? "pending";
    const limitText = stringOption(ctx.options, "limit") ?? String(DEFAULT_APPROVAL_PAGE);
    const limit = /^\d+$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_APPROVAL_PAGE)
      throw new IvoaiError("USAGE", `--limit must be an integer from 1 to ${MAX_APPROVAL_PAGE}`);
    const cursor = stringOption(ctx.options, "cursor");
    const olderThan = stringOption(ctx.options, "older-than");
    const before = olderThan === undefined ? undefined : durationAgo(olderThan);
    const names = await treeCredentialNames(ctx);
    const page = await withMemory(ctx, async (memory) => {
      await memory.gate.expire();
      return memory.gate.list(
        {
          limit,
          cursor,
          status: status === "all" ? undefined : (status as ApprovalStatus),
          requester: stringOption(ctx.options, "requester"),
          scope: stringOption(ctx.options, "scope"),
          tool: stringOption(ctx.options, "tool"),
          q: stringOption(ctx.options, "search"),
          before,
        },
        names,
      );
    });
    ctx.out.data(page, ({ approvals }) =>
      formatTable(
        ["ID", "STATUS", "CREATED", "TOOL", "TARGET", "REQUESTER", "DIFF"],
        approvals.map((row: ApprovalSummary) => [
          row.id,
          row.status,
          row.created_at,
          row.tool,
          `${row.scope}:${row.path}`,
          row.requester_name ? `${row.requester_name} (${row.requester})` : row.requester,
          `${row.diff_bytes} B`,
        ]),
        `no ${status === "all" ? "" : `${status} `}approval requests${cursor ? " after this cursor" : ""}`,
      ),
    );
    if (page.next_cursor && !ctx.json) {
      const root = stringOption(ctx.options, "root");
      const filters = ["requester", "scope", "tool", "search", "older-than"]
        .map((name) => [name, stringOption(ctx.options, name)])
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => ` --${name} ${shellQuote(value as string)}`)
        .join("");
      ctx.out.note(
        `more requests: ivoai server approvals list --status ${status} --limit ${limit}${filters}` +
          `${root ? ` --root ${shellQuote(root)}` : ""} --cursor ${page.next_cursor}`,
      );
    }
    return 0;
  },
};

const ID = [
  {
    name: "ID",
    description: "approval id (from 'approvals list')",
    required: true,
    complete: "approval-id" as const,
  },
];

const showCommand: CommandSpec = {
  kind: "command",
  name: "show",
  summary: "Show one request: everything approving it changes, and its diff",
  json: true,
  positionals: ID,
  options: ROOT_OPTION,
  async run(ctx) {
    const id = ctx.positionals[0] ?? "";
    const names = await treeCredentialNames(ctx);
    const approval = await withMemory(ctx, (memory) => memory.gate.detail(id, names));
    if (!approval) throw new IvoaiError("NOT_FOUND", `no approval with id ${id}`);
    ctx.out.data(approval, renderApproval);
    return 0;
  },
};

function decisionCommand(verb: "approve" | "reject"): CommandSpec {
  return {
    kind: "command",
    name: verb,
    summary:
      verb === "approve"
        ? "Approve requests: each change is applied once"
        : "Reject requests: nothing is changed",
    description:
      "With several IDs each is decided on its own, exactly as alone: one line per request, and --json prints " +
      "{results: [{id, outcome, message?}]} (with one ID: the outcome and the decided request). The exit " +
      "status is 1 unless every one was " +
      `${verb === "approve" ? "applied" : "rejected"}. Read each with 'approvals show ID' first.`,
    json: true,
    positionals: [{ ...(ID[0] as (typeof ID)[number]), variadic: true }],
    options: {
      ...ROOT_OPTION,
      reason: { type: "string", value: "TEXT", description: "why (recorded in the audit log)" },
    },
    async run(ctx) {
      const actor = `operator:${userInfo().username}`;
      if (ctx.positionals.length > 1) return decideMany(ctx, verb, actor);
      const id = ctx.positionals[0] ?? "";
      const outcome = await withMemory(ctx, (memory) =>
        memory.gate.decide(id, verb === "approve", actor, stringOption(ctx.options, "reason")),
      );
      ctx.out.data(outcome, (o) =>
        "message" in o
          ? `approval ${id}: ${o.outcome} — ${oneLine(o.message)}`
          : `approval ${id}: ${o.outcome}`,
      );
      return outcome.outcome === "applied" || outcome.outcome === "rejected" ? 0 : 1;
    },
  };
}

async function decideMany(ctx: CommandContext, verb: "approve" | "reject", actor: string): Promise<number> {
  if (ctx.positionals.length > MAX_BULK_DECISION)
    throw new IvoaiError("USAGE", `at most ${MAX_BULK_DECISION} requests in one decision`);
  const results = await withMemory(ctx, (memory) =>
    memory.gate.decideMany(ctx.positionals, verb === "approve", actor, stringOption(ctx.options, "reason")),
  );
  ctx.out.data({ results }, () =>
    results
      .map((r) => `approval ${r.id}: ${r.outcome}${r.message ? ` — ${oneLine(r.message)}` : ""}`)
      .join("\n"),
  );
  return results.every((r) => r.outcome === (verb === "approve" ? "applied" : "rejected")) ? 0 : 1;
}

export const serverApprovalsGroup: GroupSpec = {
  kind: "group",
  name: "approvals",
  summary: "Review the write requests agents made (APPROVAL_GATE)",
  children: [listCommand, showCommand, decisionCommand("approve"), decisionCommand("reject")],
};

export const serverAuditCommand: CommandSpec = {
  kind: "command",
  name: "audit",
  summary: "Read the audit log of tool calls and decisions",
  json: true,
  options: {
    ...ROOT_OPTION,
    since: {
      type: "string",
      value: "WHEN",
      description: "a duration back (e.g. 1h, 7d) or an ISO time (default 24h)",
    },
    kind: { type: "string", value: "KIND", choices: AUDIT_KINDS, description: "only events of this kind" },
    limit: { type: "string", value: "N", description: "at most N events, the newest (default 1000)" },
    before: {
      type: "string",
      value: "ID",
      description: "only events older than this id (the first id of the page shown): the page before",
    },
  },
  async run(ctx) {
    const sinceText = stringOption(ctx.options, "since") ?? "24h";
    const since = /^\d+[smhd]$/.test(sinceText)
      ? new Date(Date.now() - parseDuration(sinceText)).toISOString()
      : Number.isNaN(Date.parse(sinceText))
        ? undefined
        : new Date(sinceText).toISOString();
    if (!since) throw new IvoaiError("USAGE", `invalid --since '${sinceText}'`);
    const kind = stringOption(ctx.options, "kind");
    const limit = Number(stringOption(ctx.options, "limit") ?? "1000");
    if (!Number.isInteger(limit) || limit < 1)
      throw new IvoaiError("USAGE", "--limit must be a positive integer");
    const beforeText = stringOption(ctx.options, "before");
    if (beforeText !== undefined && !/^[1-9]\d{0,15}$/.test(beforeText))
      throw new IvoaiError("USAGE", "--before takes an event id (a positive integer)");
    const paths = await requireServerTree(ctx, ["auditDir"]);
    const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
    try {
      const events = await audit.list({
        since,
        limit,
        ...(kind ? { kind: kind as AuditEvent["kind"] } : {}),
        ...(beforeText !== undefined ? { before: Number(beforeText) } : {}),
      });
      ctx.out.data({ events }, ({ events: rows }) =>
        formatTable(
          ["ID", "AT", "KIND", "WHAT", "WHO", "STATUS", "MS"],
          rows.map((row) =>
            row.kind === "tool_call"
              ? [
                  String(row.id),
                  row.at,
                  row.kind,
                  row.tool,
                  row.credential_id,
                  row.status,
                  String(row.latency_ms),
                ]
              : [
                  String(row.id),
                  row.at,
                  row.kind,
                  String(row.detail.approval_id ?? row.detail.path ?? ""),
                  row.actor,
                  String(row.detail.outcome ?? ""),
                  "",
                ],
          ),
          "no audit events",
        ),
      );
    } finally {
      await audit.close();
    }
    return 0;
  },
};
