// What the primary may ask of ivoai through the ivoai-orchestrator MCP: start an advisory read-only task,
// follow tasks, and read exact worker evidence (ownership, TTL, size and digest checked by the store).

import { IvoaiError } from "../../shared/errors.js";
import { oneLine } from "../../shared/terminal-text.js";
import type { PlanTask, TaskState, WorkerResult } from "./contracts.js";
import type { EngineContext } from "./engine-context.js";
import type { ControlHandlers } from "./orchestrator/protocol.js";
import { decide, taskRecord } from "./plan-run.js";
import { runWorkerTask } from "./workers.js";

/** Delegated tasks per session, beyond the plan's 12. */
const MAX_DELEGATED = 12;

export function delegationHandlers(ctx: EngineContext): ControlHandlers {
  let next = 1;
  return {
    async delegate(input) {
      const delegatedSoFar = ctx.recorder.state.tasks.filter((task) => task.origin === "delegated").length;
      if (delegatedSoFar >= MAX_DELEGATED) {
        throw new IvoaiError("CONFLICT", `at most ${MAX_DELEGATED} delegated tasks per session`);
      }
      if (ctx.finished.aborted || ctx.signal.aborted)
        throw new IvoaiError("CONFLICT", "the session is ending");
      // A delegated task starts now: what it builds on must already be there.
      const notDone = (input.depends_on ?? []).filter(
        (id) => !ctx.recorder.state.tasks.some((task) => task.id === id && task.state === "done"),
      );
      if (notDone.length) {
        throw new IvoaiError(
          "USAGE",
          `depends_on may name only finished tasks (not ${notDone.join(", ")}); check task_status and delegate again`,
        );
      }
      const task: PlanTask = {
        // Plan ids cannot hold ":", so a delegated id never collides with one.
        id: `del:${next++}`,
        kind: input.kind,
        instructions: input.instructions,
        depends_on: input.depends_on ?? [],
        signals: {
          complexity: input.signals?.complexity ?? 0.5,
          context_need: input.signals?.context_need ?? 0.5,
          risk: input.signals?.risk ?? 0.3,
          ambiguity: input.signals?.ambiguity ?? 0.3,
          est_tokens: input.signals?.est_tokens ?? 20_000,
        },
      };
      const decision = decide(ctx, task);
      ctx.recorder.change((state) => {
        state.tasks.push(taskRecord(task, "delegated", decision));
      });
      if (decision.run !== "worker") {
        return { task_id: task.id, state: "primary" as TaskState, reason: oneLine(decision.reason) };
      }
      // Shares the session's worker slots; stops when the session ends; the session waits for it.
      const running = runWorkerTask(
        ctx,
        task,
        decision.profile,
        AbortSignal.any([ctx.signal, ctx.finished]),
      ).finally(() => ctx.background.delete(running));
      ctx.background.add(running);
      return { task_id: task.id, state: "running" as TaskState, reason: oneLine(decision.reason) };
    },
    async status(taskId) {
      const tasks = ctx.recorder.state.tasks.filter((task) => taskId === undefined || task.id === taskId);
      if (taskId !== undefined && tasks.length === 0) throw new IvoaiError("NOT_FOUND", `no task ${taskId}`);
      return {
        tasks: tasks.map((task) => {
          const result: WorkerResult | undefined = ctx.results.get(task.id);
          return { task_id: task.id, state: task.state, ...(result ? { result } : {}) };
        }),
      };
    },
    readArtifact(ref, offset, length) {
      return ctx.artifacts.read(ref, {
        sessionId: ctx.sessionId,
        ...(offset !== undefined ? { offset } : {}),
        ...(length !== undefined ? { length } : {}),
      });
    },
  };
}
