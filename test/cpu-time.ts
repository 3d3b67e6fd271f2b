// CPU time of a call, for tests that prove work stays linear (a parser on hostile input, a scan of 100,000 rows)
// without timing a shared, busy machine's wall clock.

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
