// The optional lifecycle coordinator of orchestrated sessions: an interface the engine may call, a default
// that does nothing, and the Ruflo adapter behind it. Only opaque ids and lifecycle states ever cross it.
import { IvoaiError } from "../../shared/errors.js";
import type { TaskState } from "./contracts.js";
import { createRufloCoordinator, type RufloOptions } from "./ruflo.js";

export { isOpaqueTaskId, opaqueTaskId, PRIMARY_TASK_KEY } from "./opaque-task-id.js";

/** What a coordinator learns about a session: its id and the private runtime subtree it may use. */
export interface CoordinatedSession {
  sessionId: string;
  /** The session's private 0700 runtime directory; a coordinator works only below it. */
  runtimeDir: string;
}

export interface CoordinatorAdmission {
  admitted: boolean;
  /** One line: why the coordinator admitted or refused the session. */
  reason: string;
  /** The coordinator's verified swarm id, when it runs one. */
  swarmId?: string;
}

/**
 * Tracks a session's lifecycle outside ivoai. It never schedules, routes, runs models or stores knowledge:
 * ivoai stays the authority, so a session without a coordinator behaves the same.
 */
export interface LifecycleCoordinator {
  readonly name: string;
  /** Fails closed: anything unexpected refuses the session with a one-line reason (never throws). */
  admit(session: CoordinatedSession): Promise<CoordinatorAdmission>;
  /** Registers a task by its opaque id (`opaqueTaskId`); rejects any other id shape. */
  registerTask(opaqueTaskId: string, state: TaskState): Promise<void>;
  updateTask(opaqueTaskId: string, state: TaskState): Promise<void>;
  /** Ends the coordination and removes its ephemeral state; never rejects. */
  close(): Promise<void>;
}

export const COORDINATOR_KINDS = ["none", "ruflo"] as const;
export type CoordinatorKind = (typeof COORDINATOR_KINDS)[number];

/** The default: admits every session and records nothing. */
export const noCoordinator: LifecycleCoordinator = Object.freeze({
  name: "none",
  admit: async () => ({ admitted: true, reason: "no lifecycle coordinator configured" }),
  registerTask: async () => {},
  updateTask: async () => {},
  close: async () => {},
});

export interface CoordinatorOptions {
  /** Required for "ruflo". */
  ruflo?: RufloOptions;
}

export function createCoordinator(
  kind: CoordinatorKind,
  options: CoordinatorOptions = {},
): LifecycleCoordinator {
  switch (kind) {
    case "none":
      return noCoordinator;
    case "ruflo":
      if (!options.ruflo)
        throw new IvoaiError("CONFIG_MISSING", "coordinator ruflo needs the path of the ruflo executable");
      return createRufloCoordinator(options.ruflo);
  }
}
