// Thread priorities on Linux: a worker thread that does background work (ingest preparation) lowers its own
// priority, so that the thread it feeds (the single catalogue writer, or a gateway serving requests) is never
// starved of a core by its helpers. Best effort: elsewhere, or without /proc, nothing changes.
import { readFileSync, readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** The kernel's id of the calling thread (the process id on the main thread), from /proc/thread-self. */
export function currentThreadId(): number | undefined {
  try {
    // "<pid>/task/<tid>"
    const link = readlinkSync("/proc/thread-self");
    const id = Number(link.slice(link.lastIndexOf("/") + 1));
    return Number.isInteger(id) && id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Raises the nice value of thread `id` by `steps` (at most to 19): on Linux setpriority(PRIO_PROCESS) with a
 * thread id applies to that thread alone. Returns the new nice value, or undefined when it could not be set.
 */
export function lowerThreadPriority(steps: number, id = currentThreadId()): number | undefined {
  if (id === undefined) return undefined;
  try {
    const nice = Math.min(19, getPriority(id) + steps);
    setPriority(id, nice);
    return nice;
  } catch {
    return undefined;
  }
}

/** Thread or process `id`'s nice value as the kernel reports it (field 19 of its stat line). */
export function niceOf(id: number): number {
  const stat = readFileSync(`/proc/${id}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}
