// Marks of the managed OpenCode servers, and the ending of those a killed ivoai left behind. Both the TUI
// frontend and headless `ivoai auto` end orphans at their start, so a killed session's server does not live
// on until the next TUI.
import { promises as fs } from "node:fs";
import path from "node:path";
import { writeFileAtomic } from "../../shared/atomic-file.js";
import { processStartTicks } from "../session/store.js";

/** Managed OpenCode's own home below ivoai's state (config, data, plugins, server marks). */
export function opencodeHome(stateDir: string): string {
  return path.join(stateDir, "frontend", "opencode");
}

/** Writes `<home>/servers/<ivoai pid>.json` naming this ivoai and its OpenCode server (with start times). */
export async function markServer(home: string, serverPid: number | undefined): Promise<string> {
  const dir = path.join(home, "servers");
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${process.pid}.json`);
  const mark = {
    ivoai_pid: process.pid,
    ivoai_ticks: processStartTicks(process.pid),
    server_pid: serverPid ?? null,
    server_ticks: serverPid === undefined ? null : processStartTicks(serverPid),
  };
  await writeFileAtomic(file, JSON.stringify(mark), { mode: 0o600 });
  return file;
}

/**
 * Ends the OpenCode servers of ivoai processes that are gone (killed before they could): only when the
 * recorded ivoai no longer runs and the server is still the recorded process (pid and start time).
 */
export async function endOrphanedServers(home: string): Promise<void> {
  const dir = path.join(home, "servers");
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((entry) => /^\d+\.json$/.test(entry))) {
    const file = path.join(dir, name);
    try {
      const mark = JSON.parse(await fs.readFile(file, "utf8")) as {
        ivoai_pid: number;
        ivoai_ticks: string | null;
        server_pid: number | null;
        server_ticks: string | null;
      };
      if (mark.ivoai_ticks !== null && processStartTicks(mark.ivoai_pid) === mark.ivoai_ticks) continue;
      if (
        mark.server_pid !== null &&
        mark.server_ticks !== null &&
        processStartTicks(mark.server_pid) === mark.server_ticks
      ) {
        try {
          process.kill(-mark.server_pid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
      await fs.rm(file, { force: true });
    } catch {
      await fs.rm(file, { force: true });
    }
  }
}
