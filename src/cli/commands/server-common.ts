// Pieces every `ivoai server …` command shares: the --root option and access to the enrollment state.

import { constants, promises as fs } from "node:fs";
import { loadServerConfig } from "../../config/server-config.js";
import { resolveServerRoot, type ServerPaths, serverPaths } from "../../config/server-paths.js";
import { credentialNames } from "../../server/admin/credential-names.js";
import {
  type ContextService,
  ensureContextDir,
  openCatalogue,
  openContextService,
} from "../../server/context/service.js";
import { createEnrollmentService, type EnrollmentService } from "../../server/enrollment/service.js";
import { openServerEnrollmentStore } from "../../server/enrollment/store.js";
import type { OAuthStore } from "../../server/oauth/store.js";
import { oauthStoreExists, openOAuthStoreOf } from "../../server/oauth/store-open.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createLogger } from "../../shared/logger.js";
import { type CommandContext, defineOptions, stringOption } from "../command.js";

export const ROOT_OPTION = defineOptions({
  root: {
    type: "string",
    value: "DIR",
    description: "server tree root (default: $IVOAI_SERVER_ROOT or /, the production paths)",
  },
});

export function rootOf(ctx: CommandContext): string {
  return resolveServerRoot(stringOption(ctx.options, "root"), ctx.env);
}

/** The part of the server tree a command reads. */
export type ServerPart = "enrollmentDir" | "contextDir" | "memoryDir" | "auditDir" | "oauthDir";

/**
 * The paths of an initialised server tree, once its configuration and the `parts` a command needs are
 * readable: a missing tree names --root/IVOAI_SERVER_ROOT, an unreadable one says whose it is.
 */
export async function requireServerTree(
  ctx: CommandContext,
  parts: readonly ServerPart[] = [],
): Promise<ServerPaths> {
  const paths = serverPaths(rootOf(ctx));
  const checks = [
    { file: paths.configFile, mode: constants.R_OK },
    ...parts.map((part) => ({ file: paths[part], mode: constants.R_OK | constants.X_OK })),
  ];
  for (const { file, mode } of checks) {
    try {
      await fs.access(file, mode);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "EACCES" || code === "EPERM") throw permissionDenied(file);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      if (file === paths.configFile) throw missingTree(paths.root);
      throw new IvoaiError(
        "CONFIG_MISSING",
        `the server tree at ${paths.root} is incomplete (${file} missing): run "ivoai server init --root ${paths.root}" to repair it`,
      );
    }
  }
  return paths;
}

function missingTree(root: string): IvoaiError {
  return new IvoaiError(
    "CONFIG_MISSING",
    `no ivoai server at ${root} (etc/ivoai/server.toml missing): run "ivoai server init --root ${root}" or pass --root/IVOAI_SERVER_ROOT`,
  );
}

function permissionDenied(file: string): IvoaiError {
  return new IvoaiError(
    "PERMISSION_DENIED",
    `permission denied reading ${file}: run as the server's user or fix the permissions`,
  );
}

/** Opens the enrollment store of an initialised server, runs `use`, and closes it. */
export async function withEnrollment<T>(
  ctx: CommandContext,
  use: (service: EnrollmentService) => Promise<T>,
): Promise<T> {
  const paths = await requireServerTree(ctx, ["enrollmentDir"]);
  const store = await openServerEnrollmentStore(paths);
  try {
    return await use(createEnrollmentService({ store }));
  } finally {
    await store.close();
  }
}

/** Opens the context service of an initialised server for one command. */
export async function withContext<T>(
  ctx: CommandContext,
  use: (service: ContextService, paths: ServerPaths) => Promise<T>,
): Promise<T> {
  const paths = await requireServerTree(ctx, ["contextDir"]);
  await ensureContextDir(paths);
  const config = await loadServerConfig(paths.configFile);
  const service = openContextService({
    paths,
    config,
    logger: createLogger({ level: "warn" }),
    ...workerEntry(),
    catalogue: await openCatalogue(paths),
  });
  try {
    return await use(service, paths);
  } finally {
    await service.close();
  }
}

/** The running ivoai script, when it is the bundled binary (worker threads can run it). */
export function workerEntry(): { workerEntry?: string } {
  const entry = process.argv[1];
  return entry?.endsWith(".mjs") ? { workerEntry: entry } : {};
}

/** Runs `use` on the tree's OAuth store, or answers `absent` when Web MCP never created one. */
export async function withOAuthStore<T>(
  ctx: CommandContext,
  absent: T,
  use: (store: OAuthStore) => Promise<T>,
): Promise<T> {
  const paths = await requireServerTree(ctx, ["oauthDir"]);
  if (!(await oauthStoreExists(paths))) return absent;
  const store = await openOAuthStoreOf(paths);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** Credential id → name from the tree's enrolled and Web MCP clients (what people know requesters by). */
export async function treeCredentialNames(ctx: CommandContext): Promise<Map<string, string>> {
  const enrolled = await withEnrollment(ctx, (service) => service.listClients());
  const oauth = await withOAuthStore(ctx, [], (store) => store.listClients());
  return credentialNames({
    enrollment: { listClients: async () => enrolled },
    oauth: { listClients: async () => oauth },
  });
}
