// `ivoai server console login|sessions|revoke`: sign-in links for the web console and its sessions. A code is
// shown once (only its hash is kept); sessions are listed without any secret. A revocation is recorded in the
// audit log, as one from the console is.
import { userInfo } from "node:os";
import { loadServerConfig } from "../../config/server-config.js";
import type { ServerPaths } from "../../config/server-paths.js";
import { CONSOLE_ROLES } from "../../protocol/console-api.js";
import { CONSOLE_ROLE_SCOPES } from "../../protocol/scopes.js";
import { openAuditLogOn } from "../../server/audit/store.js";
import { consoleSessionRevoked } from "../../server/console/session-routes.js";
import {
  type ConsoleSessionRecord,
  type ConsoleSessionState,
  type ConsoleStore,
  consoleSessionState,
  idleEnd,
  openConsoleStoreOn,
} from "../../server/console/store.js";
import { readPidFile } from "../../server/ops/pid-file.js";
import { resolveStoreBackend } from "../../server/store/backend.js";
import { IvoaiError } from "../../shared/errors.js";
import { isLoopbackHost } from "../../shared/loopback.js";
import { type CommandContext, defineCommand, type GroupSpec } from "../command.js";
import { formatTable } from "../output.js";
import { ROOT_OPTION, requireServerTree } from "./server-common.js";

const NAME_PATTERN = /^[\p{L}\p{N} ._@-]{1,64}$/u;

async function withConsoleStore<T>(
  ctx: CommandContext,
  use: (store: ConsoleStore, paths: ServerPaths) => Promise<T>,
): Promise<T> {
  const paths = await requireServerTree(ctx, ["enrollmentDir"]);
  const store = await openConsoleStoreOn(await resolveStoreBackend(paths), paths);
  try {
    return await use(store, paths);
  } finally {
    await store.close();
  }
}

/**
 * Revokes with the audit log open, recording each session `revoke` ended (by the local operator, as approvals
 * decided here are); the log is written before the command answers.
 */
async function revokeAudited<T>(
  ctx: CommandContext,
  revoke: (store: ConsoleStore) => Promise<{ result: T; sessions: ConsoleSessionRecord[] }>,
): Promise<T> {
  return withConsoleStore(ctx, async (store, paths) => {
    const audit = await openAuditLogOn(await resolveStoreBackend(paths), paths);
    try {
      const { result, sessions } = await revoke(store);
      const actor = `operator:${userInfo().username}`;
      for (const session of sessions) await audit.record(consoleSessionRevoked(session, actor, actor));
      return result;
    } finally {
      await audit.close();
    }
  });
}

/** The origin people open: the configured public URL, or the running demo's when it follows its bound port. */
async function publicBase(paths: ServerPaths, configured: string): Promise<string> {
  const url = new URL(configured);
  if (url.port === "0" && isLoopbackHost(url.hostname)) {
    const pid = await readPidFile(paths.pidFile);
    if (pid.state === "running" && pid.record.public_url) return new URL(pid.record.public_url).origin;
  }
  return url.origin;
}

const loginCommand = defineCommand({
  name: "login",
  summary: "Create a single-use web console sign-in link (printed once)",
  description:
    "Open the link in a browser to sign in; the code sits in the link's #fragment, which the browser never\n" +
    "sends to the server, and can be typed on the sign-in page instead. The server keeps its SHA-256 hash only.",
  json: true,
  options: {
    ...ROOT_OPTION,
    ttl: { type: "duration", default: "10m", max: "24h", description: "how long the code works" },
    role: {
      type: "enum",
      value: "ROLE",
      choices: CONSOLE_ROLES,
      default: "viewer",
      description: "what the session may do",
    },
    name: {
      type: "string",
      value: "NAME",
      description: "who signs in, shown in the console and the audit log",
    },
  },
  async run(ctx) {
    const { ttl: ttlMs, role } = ctx.options;
    const name = (ctx.options.name ?? "console").trim();
    if (!NAME_PATTERN.test(name))
      throw new IvoaiError("USAGE", "--name takes 1–64 letters, digits, spaces and . _ @ -");
    const created = await withConsoleStore(ctx, async (store, paths) => {
      const config = await loadServerConfig(paths.configFile);
      const now = new Date();
      await store.prune(now, config.console.idle_timeout);
      const { code, view } = await store.createCode({ role, name, ttlMs, now });
      const base = await publicBase(paths, config.server.public_url);
      return { ...view, scopes: [...CONSOLE_ROLE_SCOPES[role]], code, url: `${base}/console/#code=${code}` };
    });
    ctx.out.data(created, (view) =>
      [
        `console sign-in ${view.id} for ${view.name} as ${view.role} (expires ${view.expires_at}, single use)`,
        "open (shown once):",
        view.url,
        "or enter the code on the sign-in page:",
        view.code,
      ].join("\n"),
    );
    return 0;
  },
});

interface SessionEntry extends ConsoleSessionRecord {
  status: ConsoleSessionState;
  idle_expires_at: string;
}

const sessionsCommand = defineCommand({
  name: "sessions",
  summary: "List web console sessions (no token is shown)",
  json: true,
  options: ROOT_OPTION,
  async run(ctx) {
    const sessions = await withConsoleStore(ctx, async (store, paths) => {
      const idleMs = (await loadServerConfig(paths.configFile)).console.idle_timeout;
      const now = new Date();
      return (await store.listSessions()).map(
        (session): SessionEntry => ({
          ...session,
          status: consoleSessionState(session, now, idleMs),
          idle_expires_at: idleEnd(session, idleMs),
        }),
      );
    });
    ctx.out.data({ sessions }, ({ sessions: rows }) =>
      formatTable(
        ["ID", "NAME", "ROLE", "STATUS", "CREATED", "LAST SEEN", "EXPIRES"],
        rows.map((row) => [
          row.id,
          row.name,
          row.role,
          row.status,
          row.created_at,
          row.last_seen_at,
          row.expires_at,
        ]),
      ),
    );
    return 0;
  },
});

const revokeCommand = defineCommand({
  name: "revoke",
  summary: "Sign out one web console session, or all of them (effective on their next request)",
  json: true,
  positionals: [{ name: "ID", description: "a session id (cs_…, from 'console sessions')" }],
  options: { ...ROOT_OPTION, all: { type: "boolean", description: "revoke every session" } },
  async run(ctx) {
    const id = ctx.positionals[0];
    const all = ctx.options.all === true;
    if (all === (id !== undefined)) throw new IvoaiError("USAGE", "give either a session ID or --all");
    const at = new Date();
    if (all) {
      const revoked = await revokeAudited(ctx, async (store) => {
        const count = await store.revokeAll(at);
        // The sessions this call revoked are those revoked at its very instant.
        const stamp = at.toISOString();
        const sessions = (await store.listSessions()).filter((session) => session.revoked_at === stamp);
        return { result: count, sessions };
      });
      ctx.out.data({ revoked }, (v) => `${v.revoked} console session(s) revoked`);
      return 0;
    }
    const session = await revokeAudited(ctx, async (store) => {
      const revoked = await store.revoke(id ?? "", at);
      return { result: revoked, sessions: revoked ? [revoked] : [] };
    });
    if (!session) throw new IvoaiError("NOT_FOUND", `no console session with id ${id}`);
    ctx.out.data(session, (v) => `console session ${v.id} (${v.name}): revoked at ${v.revoked_at}`);
    return 0;
  },
});

export const serverConsoleGroup: GroupSpec = {
  kind: "group",
  name: "console",
  summary: "Sign people in to the web console and manage their sessions",
  children: [loginCommand, sessionsCommand, revokeCommand],
};
