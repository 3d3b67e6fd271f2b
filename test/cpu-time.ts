// CPU time of a synchronous call, for tests that prove a parser stays linear on hostile input.

/**
 * CPU milliseconds `run` takes, best of five: the machine running the tests may be busy, and a quadratic
 * pattern on 1 MiB takes seconds whatever the load. A throw (refusing hostile input) still counts as done.
 */
export function cpuMs(run: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
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
