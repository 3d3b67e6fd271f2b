// After a crash: an orchestrated session whose ivoai process is gone but whose record still says it runs is
// closed on the next AUTO start. Executor process groups it recorded are ended when their leader is still the
// same process (pid and /proc start time match); the last checkpoint stays as it was.
import type { SessionStore } from "../session/store.js";
import { processStartTicks } from "../session/store.js";

export async function recoverStaleSessions(
  store: SessionStore,
  notice: (message: string) => void,
): Promise<number> {
  let recovered = 0;
  for (const session of await store.list()) {
    if (session.mode !== "orchestrated" || session.live) continue;
    if (session.status !== "running" && session.status !== "starting") continue;
    let ended = 0;
    for (const entry of session.auto?.processes ?? []) {
      if (entry.start_ticks === null || processStartTicks(entry.pid) !== entry.start_ticks) continue;
      try {
        process.kill(-entry.pid, "SIGKILL");
        ended++;
      } catch {
        // gone meanwhile
      }
    }
    const seq = session.auto?.checkpoint.seq ?? 0;
    await store
      .update(session.id, {
        status: "failed",
        error: `ivoai ended without recording it (last checkpoint ${seq}); ${ended} executor process group(s) ended on recovery`,
        ended_at: new Date().toISOString(),
        ...(session.auto ? { auto: { ...session.auto, processes: [] } } : {}),
      })
      .catch(() => undefined);
    notice(`ivoai auto: closed ${session.id}, left running by an ivoai that ended (last checkpoint ${seq})`);
    recovered++;
  }
  return recovered;
}
