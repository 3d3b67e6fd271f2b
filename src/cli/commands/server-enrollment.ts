// `ivoai server enrollment create|list|revoke`
import { loadServerConfig } from "../../config/server-config.js";
import { parseScopeList, type Scope } from "../../protocol/scopes.js";
import type { EnrollmentView } from "../../server/enrollment/service.js";
import { IvoaiError } from "../../shared/errors.js";
import { type CommandContext, type CommandSpec, defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { ROOT_OPTION, requireServerTree, withEnrollment } from "./server-common.js";

/** What `enrollment create` reaches beyond the process: the tree's enrollment store. */
export interface EnrollmentCreateDeps {
  /** A new code lasting `ttlMs` (the tree's configured default when undefined) for `scopes`. */
  createCode(
    ctx: CommandContext,
    request: { ttlMs: number | undefined; scopes?: Scope[] },
  ): Promise<{ enrollment: EnrollmentView; code: string }>;
}

/** The real store of the tree the command names, and its config's default TTL. */
export const REAL_ENROLLMENT_CREATE_DEPS: EnrollmentCreateDeps = {
  async createCode(ctx, { ttlMs, scopes }) {
    const config = await loadServerConfig((await requireServerTree(ctx)).configFile);
    const lifetime = ttlMs ?? config.enrollment.default_ttl;
    return withEnrollment(ctx, (service) =>
      service.createCode({ ttlMs: lifetime, ...(scopes ? { scopes } : {}) }),
    );
  },
};

/** `server enrollment create` on `deps` (the real store unless a test passes a fake). */
export function createEnrollmentCreateCommand(
  deps: EnrollmentCreateDeps = REAL_ENROLLMENT_CREATE_DEPS,
): CommandSpec {
  return defineCommand({
    name: "create",
    summary: "Create a single-use enrollment code (printed once)",
    description:
      "The code is shown only now; the server keeps its SHA-256 hash. Give it to the person enrolling,\n" +
      "who passes it on stdin ('ivoai connect server add … --code-stdin').",
    json: true,
    options: {
      ...ROOT_OPTION,
      ttl: { type: "duration", max: "30d", description: "lifetime (default from config: 10m)" },
      scopes: {
        type: "string",
        value: "LIST",
        description: "comma-separated scopes (default: the standard client set)",
      },
    },
    async run(ctx) {
      // Flags first: a usage error must not depend on the state of the server tree.
      const flagTtlMs = ctx.options.ttl;
      const scopesText = ctx.options.scopes;
      let scopes: Scope[] | undefined;
      if (scopesText !== undefined) {
        const parsed = parseScopeList(scopesText);
        if (!Array.isArray(parsed))
          throw new IvoaiError("USAGE", `unknown scope(s): ${parsed.unknown.join(", ")}`);
        if (parsed.length === 0) throw new IvoaiError("USAGE", "--scopes needs at least one scope");
        scopes = parsed;
      }
      const created = await deps.createCode(ctx, { ttlMs: flagTtlMs, ...(scopes ? { scopes } : {}) });
      ctx.out.data({ ...created.enrollment, code: created.code }, (view) =>
        [
          `enrollment ${view.id} (expires ${view.expires_at})`,
          `scopes: ${view.scopes.join(" ")}`,
          "code (shown once, single use):",
          view.code,
        ].join("\n"),
      );
      return 0;
    },
  });
}

const createCommand = createEnrollmentCreateCommand();

const listCommand = defineCommand({
  name: "list",
  summary: "List enrollment codes and their status (codes are never shown)",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const enrollments = await withEnrollment(ctx, (service) => service.listCodes());
    ctx.out.data({ enrollments }, ({ enrollments: rows }) =>
      formatTable(
        ["ID", "STATUS", "CREATED", "EXPIRES", "CLIENT"],
        rows.map((row: EnrollmentView) => [
          row.id,
          row.status,
          row.created_at,
          row.expires_at,
          row.consumed_by ?? "-",
        ]),
      ),
    );
    return 0;
  },
});

const revokeCommand = defineCommand({
  name: "revoke",
  summary: "Revoke an unused enrollment code",
  json: true,
  positionals: [{ name: "ID", description: "enrollment id (from 'enrollment list')", required: true }],
  options: ROOT_OPTION,
  async run(ctx) {
    const id = ctx.positionals[0] ?? "";
    const view = await withEnrollment(ctx, (service) => service.revokeCode(id));
    ctx.out.data(view, (v) => `enrollment ${v.id}: ${v.status}`);
    return 0;
  },
});

export const serverEnrollmentGroup: GroupSpec = {
  kind: "group",
  name: "enrollment",
  summary: "Manage single-use enrollment codes",
  children: [createCommand, listCommand, revokeCommand],
};
