// `ivoai server approvals list|show|approve|reject` and `ivoai server audit`: the human side of APPROVAL_GATE.
// The operator at the local shell is not a credential, so it may approve any request, including an agent's.
import { userInfo } from "node:os";
import { loadServerConfig } from "../../config/server-config.js";
import { MAX_BULK_DECISION } from "../../protocol/approvals.js";
import { type ApprovalGate, DEFAULT_APPROVAL_PAGE, MAX_APPROVAL_PAGE } from "../../server/approvals/gate.js";
import { AUDIT_KINDS, type AuditLog, openAuditLogOn } from "../../server/audit/store.js";
import { openMemoryService } from "../../server/memory/service.js";
import type { ApprovalSummary } from "../../server/memory/store.js";
import { resolveStoreBackend } from "../../server/store/backend.js";
import { formatDuration } from "../../shared/duration.js";
import { IvoaiError } from "../../shared/errors.js";
import { createLogger } from "../../shared/logger.js";
import { shellQuote } from "../../shared/shell-quote.js";
import { oneLine } from "../../shared/terminal-text.js";
import {
  type CommandContext,
  type CommandSpec,
  defineCommand,
  defineOptions,
  type GroupSpec,
  type OptionsOf,
} from "../command.js";
import { formatTable } from "../output.js";
import { renderApproval } from "./approval-render.js";
import { ROOT_OPTION, requireServerTree, treeCredentialNames } from "./server-common.js";

/** What the operator's commands use of the approval gate. */
export type OperatorGate = Pick<ApprovalGate, "expire" | "list" | "detail" | "decide" | "decideMany">;

/**
 * What these commands reach beyond the process: the server tree's approval gate and audit log, and the names of
 * its clients. The real ones open the tree's stores; a test passes fakes (see server-approvals.test.ts).
 */
export interface ApprovalCommandDeps {
  withGate<T>(ctx: CommandContext, use: (gate: OperatorGate) => Promise<T>): Promise<T>;
  withAudit<T>(ctx: CommandContext, use: (audit: Pick<AuditLog, "list">) => Promise<T>): Promise<T>;
  credentialNames(ctx: CommandContext): Promise<Map<string, string>>;
}

async function withGate<T>(ctx: CommandContext, use: (gate: ApprovalGate) => Promise<T>): Promise<T> {
  const paths = await requireServerTree(ctx, ["memoryDir", "auditDir"]);
  const config = await loadServerConfig(paths.configFile);
  const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
  try {
    const memory = await openMemoryService({ paths, config, logger: createLogger({ level: "warn" }), audit });
    try {
      return await use(memory.gate);
    } finally {
      await memory.close();
    }
  } finally {
    await audit.close();
  }
}

async function withAudit<T>(ctx: CommandContext, use: (audit: AuditLog) => Promise<T>): Promise<T> {
  const paths = await requireServerTree(ctx, ["auditDir"]);
  const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
  try {
    return await use(audit);
  } finally {
    await audit.close();
  }
}

/** The real dependencies: the stores of the server tree the command names. */
export const REAL_APPROVAL_DEPS: ApprovalCommandDeps = {
  withGate,
  withAudit,
  credentialNames: treeCredentialNames,
};

const STATUSES = ["pending", "applied", "rejected", "expired", "conflict", "all"] as const;

function listCommand(deps: ApprovalCommandDeps): CommandSpec {
  return defineCommand({
    name: "list",
    summary: "List approval requests (pending by default), newest first, one page at a time",
    description:
      "Shows metadata only (no bodies or diffs; 'approvals show ID' gives the full request). When more requests " +
      "exist, the next page is one --cursor away (next_cursor with --json).",
    json: true,
    options: {
      ...ROOT_OPTION,
      status: {
        type: "enum",
        value: "STATUS",
        choices: STATUSES,
        default: "pending",
        description: "which requests",
      },
      limit: {
        type: "integer",
        value: "N",
        min: 1,
        max: MAX_APPROVAL_PAGE,
        default: DEFAULT_APPROVAL_PAGE,
        description: "requests per page",
      },
      cursor: {
        type: "string",
        value: "C",
        description: "continue after the previous page (its next cursor)",
      },
      requester: {
        type: "string",
        value: "NAME|ID",
        description: "only requests of this client (its name or credential id)",
      },
      scope: { type: "string", value: "SCOPE", description: "only requests on pages of this scope" },
      tool: { type: "string", value: "TOOL", description: "only requests made with this tool" },
      search: {
        type: "string",
        value: "TEXT",
        description: "only requests whose summary or path holds TEXT",
      },
      "older-than": { type: "duration", description: "only requests made more than DURATION ago" },
    },
    async run(ctx) {
      const { status, limit, cursor } = ctx.options;
      const olderThanMs = ctx.options["older-than"];
      const before = olderThanMs === undefined ? undefined : new Date(Date.now() - olderThanMs).toISOString();
      const names = await deps.credentialNames(ctx);
      const page = await deps.withGate(ctx, async (gate) => {
        await gate.expire();
        return gate.list(
          {
            limit,
            cursor,
            status: status === "all" ? undefined : status,
            requester: ctx.options.requester,
            scope: ctx.options.scope,
            tool: ctx.options.tool,
            q: ctx.options.search,
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
        const root = ctx.options.root;
        const olderThan = olderThanMs === undefined ? undefined : formatDuration(olderThanMs);
        const filters = (["requester", "scope", "tool", "search"] as const)
          .map((name) => [name, ctx.options[name]])
          .concat([["older-than", olderThan]])
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
  });
}

const ID = [
  {
    name: "ID",
    description: "approval id (from 'approvals list')",
    required: true,
    complete: "approval-id" as const,
  },
];

function showCommand(deps: ApprovalCommandDeps): CommandSpec {
  return defineCommand({
    name: "show",
    summary: "Show one request: everything approving it changes, and its diff",
    json: true,
    positionals: ID,
    options: ROOT_OPTION,
    async run(ctx) {
      const id = ctx.positionals[0] ?? "";
      const names = await deps.credentialNames(ctx);
      const approval = await deps.withGate(ctx, (gate) => gate.detail(id, names));
      if (!approval) throw new IvoaiError("NOT_FOUND", `no approval with id ${id}`);
      ctx.out.data(approval, renderApproval);
      return 0;
    },
  });
}

const DECISION_OPTIONS = defineOptions({
  ...ROOT_OPTION,
  reason: { type: "string", value: "TEXT", description: "why (recorded in the audit log)" },
});

function decisionCommand(verb: "approve" | "reject", deps: ApprovalCommandDeps): CommandSpec {
  return defineCommand({
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
    options: DECISION_OPTIONS,
    async run(ctx) {
      const actor = `operator:${userInfo().username}`;
      if (ctx.positionals.length > 1) return decideMany(ctx, verb, actor, deps);
      const id = ctx.positionals[0] ?? "";
      const outcome = await deps.withGate(ctx, (gate) =>
        gate.decide(id, verb === "approve", actor, ctx.options.reason),
      );
      ctx.out.data(outcome, (o) =>
        "message" in o
          ? `approval ${id}: ${o.outcome} — ${oneLine(o.message)}`
          : `approval ${id}: ${o.outcome}`,
      );
      return outcome.outcome === "applied" || outcome.outcome === "rejected" ? 0 : 1;
    },
  });
}

async function decideMany(
  ctx: CommandContext<OptionsOf<typeof DECISION_OPTIONS>>,
  verb: "approve" | "reject",
  actor: string,
  deps: ApprovalCommandDeps,
): Promise<number> {
  if (ctx.positionals.length > MAX_BULK_DECISION)
    throw new IvoaiError("USAGE", `at most ${MAX_BULK_DECISION} requests in one decision`);
  const results = await deps.withGate(ctx, (gate) =>
    gate.decideMany(ctx.positionals, verb === "approve", actor, ctx.options.reason),
  );
  ctx.out.data({ results }, () =>
    results
      .map((r) => `approval ${r.id}: ${r.outcome}${r.message ? ` — ${oneLine(r.message)}` : ""}`)
      .join("\n"),
  );
  return results.every((r) => r.outcome === (verb === "approve" ? "applied" : "rejected")) ? 0 : 1;
}

/** `server approvals …` on `deps` (the real stores unless a test passes fakes). */
export function createServerApprovalsGroup(deps: ApprovalCommandDeps = REAL_APPROVAL_DEPS): GroupSpec {
  return {
    kind: "group",
    name: "approvals",
    summary: "Review the write requests agents made (APPROVAL_GATE)",
    children: [
      listCommand(deps),
      showCommand(deps),
      decisionCommand("approve", deps),
      decisionCommand("reject", deps),
    ],
  };
}

export const serverApprovalsGroup = createServerApprovalsGroup();

/** `server audit` on `deps` (the real audit log unless a test passes a fake). */
export function createServerAuditCommand(deps: ApprovalCommandDeps = REAL_APPROVAL_DEPS): CommandSpec {
  return defineCommand({
    name: "audit",
    summary: "Read the audit log of tool calls and decisions",
    json: true,
    options: {
      ...ROOT_OPTION,
      since: { type: "instant", value: "WHEN", default: "24h", description: "only events since WHEN" },
      kind: { type: "enum", value: "KIND", choices: AUDIT_KINDS, description: "only events of this kind" },
      limit: {
        type: "integer",
        value: "N",
        min: 1,
        default: 1000,
        description: "at most N events, the newest",
      },
      before: {
        type: "integer",
        value: "ID",
        min: 1,
        description: "only events older than this id (the first id of the page shown): the page before",
      },
    },
    async run(ctx) {
      const { since, kind, limit, before } = ctx.options;
      const events = await deps.withAudit(ctx, (audit) =>
        audit.list({
          since,
          limit,
          ...(kind ? { kind } : {}),
          ...(before !== undefined ? { before } : {}),
        }),
      );
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
                  row.kind === "retrieval_eval"
                    ? `eval ${String(row.detail.methods)} on ${String(row.detail.queries)} queries`
                    : String(row.detail.approval_id ?? row.detail.path ?? ""),
                  row.actor,
                  String(row.detail.outcome ?? ""),
                  "",
                ],
          ),
          "no audit events",
        ),
      );
      return 0;
    },
  });
}

export const serverAuditCommand = createServerAuditCommand();
