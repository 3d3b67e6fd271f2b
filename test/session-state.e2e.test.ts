// `ivoai session list` and `session show` judge a session the same way, from its recorded process identity:
// a process killed with -9 (which never records its end) is `interrupted` in both, a live one `running`.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSessionStore, processStartTicks } from "../src/client/session/store.js";
import { runIvoai, tempDir } from "./helpers.js";

/** A child that idles until it is killed, once it has started. */
async function idler(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { stdio: "ignore" });
  await new Promise((resolve, reject) => child.once("spawn", resolve).once("error", reject));
  return child;
}

describe("session liveness", () => {
  const cleanups: (() => Promise<void>)[] = [];
  let alive: ChildProcess;
  let env: NodeJS.ProcessEnv;
  const ids: Record<"alive" | "killed" | "reused", string> = { alive: "", killed: "", reused: "" };

  beforeAll(async () => {
    const made = await tempDir("ivoai-session-state-");
    cleanups.push(made.cleanup);
    env = {
      HOME: made.dir,
      XDG_CONFIG_HOME: path.join(made.dir, "config"),
      XDG_STATE_HOME: path.join(made.dir, "state"),
      XDG_DATA_HOME: path.join(made.dir, "data"),
    };
    const store = openSessionStore(path.join(made.dir, "state", "ivoai"));
    const record = (pid: number, ticks: string | null) =>
      store.create({
        agent: "codex",
        mode: "orchestrated",
        status: "running",
        pid,
        pid_start_ticks: ticks,
        project: "host:test",
        knowledge_sources: [],
        compression: { requested: "direct", effective: "direct", reason: "test" },
      });
    alive = await idler();
    const killed = await idler();
    ids.alive = (await record(alive.pid as number, processStartTicks(alive.pid as number))).id;
    ids.killed = (await record(killed.pid as number, processStartTicks(killed.pid as number))).id;
    // The live child's pid with another start time: a pid the kernel gave to a new process.
    ids.reused = (await record(alive.pid as number, "1")).id;
    const exited = new Promise((resolve) => killed.once("exit", resolve));
    killed.kill("SIGKILL");
    await exited;
  });
  afterAll(async () => {
    alive?.kill("SIGKILL");
    for (const cleanup of cleanups) await cleanup();
  });

  it("says interrupted for a killed or reused process and running for a live one, in list and show alike", async () => {
    const expected = { alive: "running", killed: "interrupted", reused: "interrupted" };

    const listed = await runIvoai(["session", "list", "--json"], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const rows = (JSON.parse(listed.stdout) as { sessions: { id: string; state: string; live: boolean }[] })
      .sessions;
    const stateOf = (id: string) => rows.find((row) => row.id === id);
    for (const [name, state] of Object.entries(expected)) {
      expect(stateOf(ids[name as keyof typeof ids])?.state, `${name} in ${listed.stdout}`).toBe(state);
      expect(stateOf(ids[name as keyof typeof ids])?.live, name).toBe(state === "running");
    }

    const table = await runIvoai(["session", "list"], { env });
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split("\n");
    expect(lines[0]).toMatch(/^ID\s+AGENT\s+MODE\s+STATE\s/);
    for (const [name, state] of Object.entries(expected)) {
      const line = lines.find((entry) => entry.startsWith(ids[name as keyof typeof ids]));
      expect(line?.split(/\s{2,}/)[3], `${name} in\n${table.stdout}`).toBe(state);
    }

    for (const [name, state] of Object.entries(expected)) {
      const id = ids[name as keyof typeof ids];
      const shown = await runIvoai(["session", "show", id, "--json"], { env });
      expect((JSON.parse(shown.stdout) as { state: string }).state, name).toBe(state);
      const text = await runIvoai(["session", "show", id], { env });
      expect(text.stdout.split("\n")[0], name).toMatch(new RegExp(`^session ${id}: ${state}\\b`));
    }
  });
});
