// The only task ids a lifecycle coordinator ever sees: keyed hashes, never task text or the plan's own ids.
import { createHash } from "node:crypto";

/** The plan-task key of the session's primary; plan task ids cannot contain "@", so it never collides. */
export const PRIMARY_TASK_KEY = "@primary";

const OPAQUE_TASK_ID = /^ivt_[0-9a-f]{32}$/;

/** A hash of the session and the plan task id: stable for the same task, meaningless outside ivoai. */
export function opaqueTaskId(sessionId: string, taskKey: string): string {
  const digest = createHash("sha256").update(`ivoai-task\0${sessionId}\0${taskKey}`).digest("hex");
  return `ivt_${digest.slice(0, 32)}`;
}

export function isOpaqueTaskId(value: string): boolean {
  return OPAQUE_TASK_ID.test(value);
}
