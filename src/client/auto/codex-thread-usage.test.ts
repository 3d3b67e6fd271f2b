import { mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codexTurnUsage, sweepThreadTotals, THREAD_TOTALS_KEEP_MS } from "./codex-thread-usage.js";
import type { TokenUsage } from "./contracts.js";

const usage = (input: number, cached: number, output: number): TokenUsage => ({
  inputTokens: input,
  cachedInputTokens: cached,
  outputTokens: output,
  costUsd: null,
  contextTokens: null,
});

describe("codex turn usage from the thread's running total", () => {
  let dir = "";
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("counts a resumed thread's turn as what it added, never the earlier turns again", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-codex-usage-"));
    expect(await codexTurnUsage(dir, "thr_1", false, usage(1000, 200, 50))).toEqual(usage(1000, 200, 50));
    // The second turn of the thread reports 1000+700 input, 200+100 cached, 50+30 output.
    expect(await codexTurnUsage(dir, "thr_1", true, usage(1700, 300, 80))).toEqual(usage(700, 100, 30));
    expect(await codexTurnUsage(dir, "thr_1", true, usage(1800, 300, 95))).toEqual(usage(100, 0, 15));
    // Another thread is its own.
    expect(await codexTurnUsage(dir, "thr_2", true, usage(10, 0, 1))).toEqual(usage(10, 0, 1));
    const files = await readdir(path.join(dir, "auto", "codex-threads"));
    expect(files.sort()).toEqual(["thr_1.json", "thr_2.json"]);
    const mode = (await stat(path.join(dir, "auto", "codex-threads", "thr_1.json"))).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it("takes a total below the one kept as a fresh count, and an odd thread id as the turn's own", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-codex-usage-"));
    await codexTurnUsage(dir, "thr_a", false, usage(5000, 0, 400));
    expect(await codexTurnUsage(dir, "thr_a", true, usage(300, 0, 20))).toEqual(usage(300, 0, 20));
    expect(await codexTurnUsage(dir, "../escape", true, usage(9, 0, 9))).toEqual(usage(9, 0, 9));
    expect(await readdir(path.join(dir, "auto", "codex-threads"))).toEqual(["thr_a.json"]);
  });

  it("forgets totals of threads not continued for a week", async () => {
    dir = await mkdtemp(path.join(tmpdir(), "ivoai-codex-usage-"));
    await codexTurnUsage(dir, "old", false, usage(1, 0, 1));
    await codexTurnUsage(dir, "new", false, usage(1, 0, 1));
    const old = path.join(dir, "auto", "codex-threads", "old.json");
    const then = new Date(Date.now() - THREAD_TOTALS_KEEP_MS - 60_000);
    await utimes(old, then, then);
    await sweepThreadTotals(dir);
    expect(await readdir(path.join(dir, "auto", "codex-threads"))).toEqual(["new.json"]);
    // A resume of the forgotten thread counts its report once, as the turn's.
    expect(await codexTurnUsage(dir, "old", true, usage(40, 0, 4))).toEqual(usage(40, 0, 4));
  });
});
