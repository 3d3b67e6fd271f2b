import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isLive, openSessionStore, processStartTicks } from "./store.js";

describe("session records", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("tells a live session from a reused PID by the process start time", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-sessions-"));
    const store = openSessionStore(dir);
    const ticks = processStartTicks(process.pid);
    expect(ticks).toMatch(/^\d+$/);
    const record = await store.create({
      agent: "codex",
      mode: "direct",
      status: "running",
      pid: process.pid,
      pid_start_ticks: ticks,
      project: "host:test",
      knowledge_sources: [],
      compression: { requested: "direct", effective: "direct", reason: "test" },
    });
    expect((await store.get(record.id)).live).toBe(true);
    const reused = await store.update(record.id, { pid_start_ticks: "1" });
    expect(isLive(reused)).toBe(false);
    const ended = await store.update(record.id, { status: "exited", pid_start_ticks: ticks });
    expect(isLive(ended)).toBe(false);
    expect((await store.list()).map((entry) => entry.id)).toEqual([record.id]);
    await expect(store.get("ses_0000000000000000")).rejects.toThrow(/no session/);
    await expect(store.get("../etc")).rejects.toThrow(/invalid session id/);
  });

  it("refuses a guarded update when the guard sees a record that moved on, and writes nothing", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-sessions-"));
    const store = openSessionStore(dir);
    const record = await store.create({
      agent: "codex",
      mode: "direct",
      status: "running",
      pid: process.pid,
      pid_start_ticks: processStartTicks(process.pid),
      project: "host:test",
      knowledge_sources: [],
      compression: { requested: "direct", effective: "direct", reason: "test" },
    });
    await store.update(record.id, { status: "exited" });
    const guard = (current: { state: string }) => {
      if (current.state !== "running") throw new Error(`moved on: ${current.state}`);
    };
    await expect(store.update(record.id, { status: "running" }, guard)).rejects.toThrow(/moved on: exited/);
    expect((await store.get(record.id)).status).toBe("exited");
    const passed = await store.update(record.id, { error: "kept" }, () => undefined);
    expect(passed.error).toBe("kept");
  });
});
