import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { createSignalRelay, type SignalRelay, signalStatus } from "./signal-relay.js";

describe("signal relay", () => {
  let relay: SignalRelay | undefined;
  afterEach(() => relay?.dispose());

  it("sees the exit of an agent that is gone before anyone waits for it", async () => {
    relay = createSignalRelay(1_000);
    const child = spawn("sh", ["-c", "exit 5"]);
    const agent = relay.watch(child);
    expect(await agent.spawned).toBe(true);
    await once(child, "exit");
    // Long after the event: the outcome is still there.
    expect(await agent.exited).toEqual({ code: 5, signal: null });
  });

  it("reports an agent that cannot start", async () => {
    relay = createSignalRelay(1_000);
    const agent = relay.watch(spawn("/nonexistent/agent"));
    expect(await agent.spawned).toBe(false);
  });

  it("lets work through while no stopping signal came, and maps signals to shell statuses", async () => {
    relay = createSignalRelay(1_000);
    expect(await relay.unlessStopped(Promise.resolve(42))).toBe(42);
    expect(() => relay?.check()).not.toThrow();
    expect(signalStatus("SIGTERM")).toBe(143);
    expect(signalStatus("SIGKILL")).toBe(137);
  });
});
