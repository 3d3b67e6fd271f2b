// Pieces every `ivoai server …` command shares: the --root option and access to the enrollment state.

import { promises as fs } from "node:fs";
import { loadServerConfig } from "../../config/server-config.js";
import { resolveServerRoot, serverPaths } from "../../config/server-paths.js";
import { type ContextService, ensureContextDir, openContextService } from "../../server/context/service.js";
import { createEnrollmentService, type EnrollmentService } from "../../server/enrollment/service.js";
import { createEnrollmentStore } from "../../server/enrollment/store.js";
import { errnoCode, IvoaiError } from "../../shared/errors.js";
import { createLogger } from "../../shared/logger.js";
import type { CommandContext, OptionSpec } from "../command.js";
import { stringOption } from "../command.js";

export const ROOT_OPTION: Record<string, OptionSpec> = {
  root: {
    type: "string",
    value: "DIR",
    description: "server tree root (default: $IVOAI_SERVER_ROOT or /, the production paths)",
  },
};

export function rootOf(ctx: CommandContext): string {
  return resolveServerRoot(stringOption(ctx.options, "root"), ctx.env);
}

/** Opens the enrollment state of an initialised server, runs `use`, and releases the lock handle. */
export async function withEnrollment<T>(
  ctx: CommandContext,
  use: (service: EnrollmentService) => Promise<T>,
): Promise<T> {
  const paths = serverPaths(rootOf(ctx));
  try {
    await fs.access(paths.enrollmentDir);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") {
      throw new IvoaiError("CONFIG_MISSING", `no server under ${paths.root}: run 'ivoai server init' first`);
    }
    throw error;
  }
  const store = createEnrollmentStore({ statePath: paths.enrollmentState, lockPath: paths.enrollmentLock });
  try {
    return await use(createEnrollmentService({ store }));
  } finally {
    store.close();
  }
}

/** Opens the context service of an initialised server for one command. */
export async function withContext<T>(
  ctx: CommandContext,
  use: (service: ContextService) => Promise<T>,
): Promise<T> {
  const paths = serverPaths(rootOf(ctx));
  await ensureContextDir(paths);
  const config = await loadServerConfig(paths.configFile);
  const service = openContextService({
    paths,
    config,
    logger: createLogger({ level: "warn" }),
    ...workerEntry(),
  });
  try {
    return await use(service);
  } finally {
    service.close();
  }
}

/** The running ivoai script, when it is the bundled binary (worker threads can run it). */
export function workerEntry(): { workerEntry?: string } {
  const entry = process.argv[1];
  return entry?.endsWith(".mjs") ? { workerEntry: entry } : {};
}
