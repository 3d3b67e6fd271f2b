// CPU time from /proc (Linux, 100 clock ticks per second): less disturbed by a busy machine than wall time.
// Undefined where /proc is not there.
import { readFileSync } from "node:fs";

/** The fields of /proc/PID/stat after pid and comm (comm may hold spaces and parentheses: cut at the last ")"). */
function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Fields `a` and `b` of proc(5) (1-based, counting pid and comm), summed and turned from ticks into ms. */
function ticksMs(fields: string[] | undefined, a: number, b: number): number | undefined {
  return fields ? (Number(fields[a - 3]) + Number(fields[b - 3])) * 10 : undefined;
}

/** User + system CPU ms that process `pid` has used (utime, stime). */
export function cpuMsOf(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : ticksMs(statFields(pid), 14, 15);
}

/** User + system CPU ms of this process's reaped children (cutime, cstime). */
export function childrenCpuMs(): number | undefined {
  return ticksMs(statFields("self"), 16, 17);
}

/** User + system CPU ms of this process's main thread (whose task id is the process id). */
export function mainThreadCpuMs(): number | undefined {
  return ticksMs(statFields(`${process.pid}/task/${process.pid}` as unknown as number), 14, 15);
}

/** CPU ms the hypervisor gave to others while this machine wanted it, all CPUs (steal, /proc/stat's cpu line). */
export function stolenCpuMs(): number | undefined {
  try {
    return Number(readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/)[8]) * 10;
  } catch {
    return undefined;
  }
}
