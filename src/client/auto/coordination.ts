// The optional lifecycle coordinator, wired to a session: with `[auto] coordinator = "ruflo"`, or "auto" (the
// default) while ruflo is installed, the session starts only after Ruflo's admission passed, and tasks are mirrored to it by opaque id and state only.
// Mirroring never waits on the scheduling path: a slow or failing coordinator cannot slow ivoai down.
import path from "node:path";
import { IvoaiError } from "../../shared/errors.js";
import { type CoordinatorSetting, selectCoordinator } from "../components/selection.js";
import type { TaskState } from "./contracts.js";
import { createCoordinator, type LifecycleCoordinator, noCoordinator, opaqueTaskId } from "./coordinator.js";

export interface Coordination {
  coordinator: LifecycleCoordinator;
  /** Mirrors a task's state (registering it the first time); fire and forget. */
  task(taskId: string, state: TaskState): void;
  close(): Promise<void>;
}

export async function startCoordination(
  kind: CoordinatorSetting,
  session: { sessionId: string; runtimeDir: string; managedBin: string; env: NodeJS.ProcessEnv },
  notice: (message: string) => void,
): Promise<Coordination> {
  if (kind === "none") return mirror(noCoordinator, session.sessionId, notice);
  // The same decision doctor's coordinator row shows.
  const selected = await selectCoordinator({
    setting: kind,
    managedBin: session.managedBin,
    env: session.env,
  });
  const command = selected.command;
  // "auto" without ruflo installed: no coordinator (doctor's coordinator row says why).
  if (kind === "auto" && selected.implementation === "none")
    return mirror(noCoordinator, session.sessionId, notice);
  if (!selected.active || !command) throw new IvoaiError("CONFIG_MISSING", selected.why);
  const coordinator = createCoordinator("ruflo", { ruflo: { command } });
  const admission = await coordinator.admit({
    sessionId: session.sessionId,
    runtimeDir: path.join(session.runtimeDir),
  });
  if (!admission.admitted) {
    await coordinator.close();
    throw new IvoaiError("FORBIDDEN", `Ruflo refused the orchestrated session: ${admission.reason}`);
  }
  notice(`ivoai auto: Ruflo admitted the session (swarm ${admission.swarmId ?? "?"})`);
  return mirror(coordinator, session.sessionId, notice);
}

function mirror(
  coordinator: LifecycleCoordinator,
  sessionId: string,
  notice: (message: string) => void,
): Coordination {
  const known = new Set<string>();
  let warned = false;
  const warn = (error: unknown) => {
    if (warned) return;
    warned = true;
    notice(
      `ivoai auto: the lifecycle coordinator failed (${(error as Error).message}); ivoai goes on without it`,
    );
  };
  let chain: Promise<void> = Promise.resolve();
  let closing = false;
  return {
    coordinator,
    task(taskId, state) {
      if (coordinator === noCoordinator) return;
      const id = opaqueTaskId(sessionId, taskId);
      const first = !known.has(id);
      known.add(id);
      chain = chain
        .then(() => {
          // Once the session ends, queued updates are dropped: close() must not wait for each of them.
          if (closing) return;
          return first ? coordinator.registerTask(id, state) : coordinator.updateTask(id, state);
        })
        .catch(warn);
    },
    async close() {
      closing = true;
      await chain;
      await coordinator.close();
    },
  };
}
