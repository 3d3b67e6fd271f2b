import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { currentThreadId, lowerThreadPriority, niceOf } from "./thread-priority.js";

describe("thread priority", () => {
  it("names the calling thread: on the main thread, the process", () => {
    expect(currentThreadId()).toBe(process.pid);
  });

  it("raises one thread's nice value by the steps asked, up to 19, and leaves others alone", async () => {
    const child = spawn(process.execPath, ["-e", "process.stdout.write('up'); setInterval(() => {}, 1000)"]);
    try {
      await once(child.stdout, "data");
      const pid = child.pid as number;
      const before = niceOf(pid);
      const mine = niceOf(process.pid);
      expect(lowerThreadPriority(5, pid)).toBe(Math.min(19, before + 5));
      expect(niceOf(pid)).toBe(Math.min(19, before + 5));
      expect(lowerThreadPriority(30, pid)).toBe(19);
      expect(niceOf(pid)).toBe(19);
      expect(niceOf(process.pid)).toBe(mine);
    } finally {
      child.kill();
    }
  });

  it("changes nothing and says so for a thread that does not exist", () => {
    expect(lowerThreadPriority(5, 2 ** 30)).toBeUndefined();
  });
});
