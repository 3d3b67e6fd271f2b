// Headless `ivoai auto` ends, at its start, the OpenCode server a killed TUI session left behind: the same
// server mark the frontend writes, for an ivoai that is gone and a server still running in its own group.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeClis, installFakeClis } from "./fake-clis.js";
import { runIvoai, tempDir } from "./helpers.js";

/** The start time /proc gives a process (field 22), as the server mark records it. */
function startTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** Resolves once the child has exited, or says after `ms` what it still saw. */
function exited(child: ChildProcess, what: string, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `${what} still runs after ${ms} ms (pid ${child.pid}, ticks ${startTicks(child.pid ?? 0)})`,
          ),
        ),
      ms,
    );
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe("ivoai auto (headless) and orphaned OpenCode servers", () => {
  const cleanups: (() => Promise<void>)[] = [];
  const children: ChildProcess[] = [];
  let fakes: FakeClis;
  let env: NodeJS.ProcessEnv;
  let stateHome: string;

  beforeAll(async () => {
    const xdg = await tempDir("ivoai-client-");
    cleanups.push(xdg.cleanup);
    fakes = await installFakeClis(path.join(xdg.dir, "fakes"));
    stateHome = path.join(xdg.dir, "state");
    env = {
      ...fakes.env,
      PATH: `${fakes.binDir}:${process.env.PATH}`,
      XDG_CONFIG_HOME: path.join(xdg.dir, "config"),
      XDG_STATE_HOME: stateHome,
      XDG_DATA_HOME: path.join(xdg.dir, "data"),
      XDG_CACHE_HOME: path.join(xdg.dir, "cache"),
      HOME: xdg.dir,
      IVOAI_KILL_AFTER_MS: "500",
    };
  });
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await fakes?.killAll();
    for (const cleanup of cleanups) await cleanup();
  });

  it("ends, on a headless start, the OpenCode server of a TUI ivoai that was killed", async () => {
    // The killed ivoai: a process that ran and is gone, its pid and start time recorded while it ran.
    const ivoai = spawn("sleep", ["600"], { stdio: "ignore" });
    children.push(ivoai);
    const ivoaiPid = ivoai.pid ?? 0;
    const ivoaiTicks = startTicks(ivoaiPid);
    ivoai.kill("SIGKILL");
    await exited(ivoai, "the stand-in ivoai", 30_000);
    // Its OpenCode server survives in its own process group, as `opencode serve` does.
    const server = spawn("sleep", ["600"], { stdio: "ignore", detached: true });
    children.push(server);
    const serverPid = server.pid ?? 0;
    const serverTicks = startTicks(serverPid);
    expect(serverTicks).not.toBeNull();
    const marks = path.join(stateHome, "ivoai", "frontend", "opencode", "servers");
    await mkdir(marks, { recursive: true });
    const mark = path.join(marks, `${ivoaiPid}.json`);
    await writeFile(
      mark,
      JSON.stringify({
        ivoai_pid: ivoaiPid,
        ivoai_ticks: ivoaiTicks,
        server_pid: serverPid,
        server_ticks: serverTicks,
      }),
    );

    // A running ivoai's server (the TUI's own, whose bridge also runs AUTO turns) is left alone.
    const liveIvoai = spawn("sleep", ["600"], { stdio: "ignore" });
    const liveServer = spawn("sleep", ["600"], { stdio: "ignore", detached: true });
    children.push(liveIvoai, liveServer);
    const liveMark = path.join(marks, `${liveIvoai.pid}.json`);
    await writeFile(
      liveMark,
      JSON.stringify({
        ivoai_pid: liveIvoai.pid,
        ivoai_ticks: startTicks(liveIvoai.pid ?? 0),
        server_pid: liveServer.pid,
        server_ticks: startTicks(liveServer.pid ?? 0),
      }),
    );

    await fakes.reset();
    await fakes.script({ codex: { turns: { answer: [{ reply: "Done." }] } }, claude: {} });
    const result = await runIvoai(["auto", "say done"], { env, timeoutMs: 90_000 });
    // Whatever the run's route, its start ended the orphan and dropped the mark.
    await exited(
      server,
      `the orphaned server (ivoai said: code ${result.code}, stderr ${result.stderr})`,
      30_000,
    );
    expect(server.signalCode).toBe("SIGKILL");
    expect(existsSync(mark)).toBe(false);
    expect(liveServer.exitCode === null && liveServer.signalCode === null).toBe(true);
    expect(existsSync(liveMark)).toBe(true);
  });
});
