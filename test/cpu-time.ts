// CPU time of a call, for tests that prove work stays linear (a parser on hostile input, a scan of 100,000 rows)
// without timing a shared, busy machine's wall clock.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * CPU milliseconds `run` takes, best of five: the machine running the tests may be busy, and a quadratic
 * pattern on 1 MiB takes seconds whatever the load. A throw (refusing hostile input) still counts as done.
 * `rounds` 1 for a call that changes state (a second round would measure other work) or is costly.
 */
export function cpuMs(run: () => unknown, rounds = 5): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    try {
      run();
    } catch {
      // Refusing hostile input is fine; only the time matters here.
    }
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

/**
 * CPU milliseconds this process (all its threads) spends until `run` settles, and its value: one round, as an
 * async call usually changes state. Work another process does (a PostgreSQL server) is not in it.
 */
export async function cpuMsOf<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const before = process.cpuUsage();
  const value = await run();
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, value };
}

let ticksPerSecond: number | undefined;

/** The CPU milliseconds in a Linux /proc/PID/stat text: the process's own (all threads), and its waited-for children's. */
export function statCpuMs(stat: string): { own: number; children: number } {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
  // After "pid (comm) " come the fields from the third on: utime, stime, cutime, cstime are the 14th to 17th.
  const fields = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  const ms = (ticks: number) => (ticks * 1000) / (ticksPerSecond as number);
  return {
    own: ms((fields[11] ?? 0) + (fields[12] ?? 0)),
    children: ms((fields[13] ?? 0) + (fields[14] ?? 0)),
  };
}

/**
 * CPU milliseconds process `pid` has used so far: for work done in a server the test started, which a busy host
 * slows down in wall time but not in CPU time.
 */
export function processCpuMs(pid: number): number {
  return statCpuMs(readFileSync(`/proc/${pid}/stat`, "utf8")).own;
}
