import { describe, expect, it } from "vitest";
import type { PlanTask, TaskState } from "./contracts.js";
import { clampConcurrency, type DagResult, runDag, type TaskChangeInfo } from "./scheduler.js";

const signals = { complexity: 0.5, context_need: 0.5, risk: 0.2, ambiguity: 0.1, est_tokens: 20_000 };
const task = (id: string, depends_on: string[] = [], kind: PlanTask["kind"] = "research"): PlanTask => ({
  id,
  kind,
  instructions: id,
  depends_on,
  signals,
});

/** Twelve tasks, four roots, two diamonds, one sink. */
const TWELVE: PlanTask[] = [
  task("a"),
  task("b"),
  task("c"),
  task("d"),
  task("e", ["a"]),
  task("f", ["a", "b"]),
  task("g", ["c"]),
  task("h", ["e", "f"]),
  task("i", ["g"]),
  task("j", ["h", "i"]),
  task("k", ["d"]),
  task("l", ["j", "k"]),
];

/** Lets every settled promise's callbacks run (one event-loop turn; no timer involved). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Running {
  task: PlanTask;
  signal: AbortSignal;
  finish: (outcome: "done" | "failed") => void;
  throwError: (error: Error) => void;
}

/** runDag with runTask calls the test completes by hand, recording concurrency and order. */
function harness(tasks: readonly PlanTask[], concurrency: number, signal?: AbortSignal) {
  const running: Running[] = [];
  const started: string[] = [];
  const ended = new Set<string>();
  const changes: [string, TaskState, TaskChangeInfo][] = [];
  let active = 0;
  let maxActive = 0;
  const violations: string[] = [];
  const result: Promise<DagResult> = runDag(tasks, {
    concurrency,
    isPrimaryTask: (t) => t.kind === "change",
    onChange: (id, state, info) => changes.push([id, state, info]),
    ...(signal ? { signal } : {}),
    runTask: (t, taskSignal) => {
      started.push(t.id);
      active += 1;
      maxActive = Math.max(maxActive, active);
      for (const dependency of t.depends_on) {
        const dependencyTask = tasks.find((candidate) => candidate.id === dependency);
        if (dependencyTask?.kind !== "change" && !ended.has(dependency)) {
          violations.push(`${t.id} started before ${dependency} ended`);
        }
      }
      return new Promise((resolve, reject) => {
        const end = () => {
          active -= 1;
          ended.add(t.id);
          running.splice(running.indexOf(entry), 1);
        };
        const entry: Running = {
          task: t,
          signal: taskSignal,
          finish: (outcome) => {
            end();
            resolve(outcome);
          },
          throwError: (error) => {
            end();
            reject(error);
          },
        };
        running.push(entry);
      });
    },
  });
  let settled = false;
  void result.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  /** Completes running tasks oldest first (failing those in `fail`) until the DAG returns. */
  const drive = async (fail: ReadonlySet<string> = new Set()) => {
    await flush();
    while (!settled) {
      const next = running[0];
      if (!next) throw new Error("nothing running but the DAG has not returned");
      next.finish(fail.has(next.task.id) ? "failed" : "done");
      await flush();
    }
    return result;
  };
  return {
    result,
    running,
    started,
    changes,
    violations,
    drive,
    get maxActive() {
      return maxActive;
    },
    get settled() {
      return settled;
    },
  };
}

const stateList = (states: Map<string, TaskState>) => Object.fromEntries(states);

describe("runDag", () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 3],
    [5, 3],
  ])("never runs more than the cap on a 12-task DAG (requested %i, cap %i)", async (requested, cap) => {
    const h = harness(TWELVE, requested);
    const { states, maxConcurrent } = await h.drive();
    expect(h.maxActive).toBe(cap);
    expect(maxConcurrent).toBe(cap);
    expect(h.violations).toEqual([]);
    expect(h.started).toHaveLength(12);
    expect([...states.values()].every((state) => state === "done")).toBe(true);
    expect([...states.keys()]).toEqual(TWELVE.map((t) => t.id));
  });

  it("starts tasks in plan order", async () => {
    const one = harness(TWELVE, 1);
    await one.drive();
    expect(one.started).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]);
    const three = harness(TWELVE, 3);
    await flush();
    expect(three.started).toEqual(["a", "b", "c"]);
    await three.drive();
    expect(three.started).toEqual(["a", "b", "c", "d", "e", "f", "g", "k", "h", "i", "j", "l"]);
  });

  it("runs a diamond's branches together and joins them", async () => {
    const h = harness([task("a"), task("b", ["a"]), task("c", ["a"]), task("d", ["b", "c"])], 3);
    await flush();
    expect(h.started).toEqual(["a"]);
    h.running[0]?.finish("done");
    await flush();
    expect(h.started).toEqual(["a", "b", "c"]);
    h.running[0]?.finish("done");
    await flush();
    expect(h.started).toEqual(["a", "b", "c"]);
    h.running[0]?.finish("done");
    await flush();
    expect(h.started).toEqual(["a", "b", "c", "d"]);
    await h.drive();
    expect(h.violations).toEqual([]);
  });

  it("skips a failed task's dependents transitively and runs the rest", async () => {
    const h = harness(TWELVE, 2);
    const { states } = await h.drive(new Set(["b"]));
    expect(stateList(states)).toEqual({
      a: "done",
      b: "failed",
      c: "done",
      d: "done",
      e: "done",
      f: "skipped",
      g: "done",
      h: "skipped",
      i: "done",
      j: "skipped",
      k: "done",
      l: "skipped",
    });
    expect(h.started).not.toContain("f");
    const reasons = Object.fromEntries(
      h.changes.filter(([, state]) => state === "skipped").map(([id, , info]) => [id, info.reason]),
    );
    expect(reasons).toEqual({
      f: "dependency b failed",
      h: "dependency f skipped",
      j: "dependency h skipped",
      l: "dependency j skipped",
    });
    expect(h.changes.find(([id, state]) => id === "b" && state === "failed")?.[2].durationMs).toBeTypeOf(
      "number",
    );
  });

  it("counts a throwing runTask as failed", async () => {
    const h = harness([task("a"), task("b", ["a"])], 2);
    await flush();
    h.running[0]?.throwError(new Error("executor crashed"));
    const { states } = await h.result;
    expect(stateList(states)).toEqual({ a: "failed", b: "skipped" });
    expect(h.changes.find(([id, s]) => id === "a" && s === "failed")?.[2].reason).toBe(
      "the task threw: executor crashed",
    );
  });

  it("on abort signals running tasks, cancels pending ones, and returns when the running ones end", async () => {
    const controller = new AbortController();
    const h = harness(TWELVE, 2, controller.signal);
    await flush();
    expect(h.started).toEqual(["a", "b"]);
    controller.abort();
    await flush();
    expect(h.running.map((r) => r.signal.aborted)).toEqual([true, true]);
    expect(h.settled).toBe(false);
    h.running[0]?.finish("done");
    await flush();
    expect(h.started).toEqual(["a", "b"]);
    h.running[0]?.finish("failed");
    const { states } = await h.result;
    expect(states.get("a")).toBe("done");
    expect(states.get("b")).toBe("cancelled");
    expect([...states.entries()].filter(([, s]) => s === "cancelled").map(([id]) => id)).toEqual([
      "b",
      "c",
      "d",
      "e",
      "f",
      "g",
      "h",
      "i",
      "j",
      "k",
      "l",
    ]);
  });

  it("starts nothing when already aborted", async () => {
    const h = harness(TWELVE, 3, AbortSignal.abort());
    const { states } = await h.result;
    expect(h.started).toEqual([]);
    expect([...states.values()].every((s) => s === "cancelled")).toBe(true);
  });

  it("marks primary tasks and lets their dependents run without running them", async () => {
    const tasks = [task("a"), task("p", ["a"], "change"), task("q", ["p"]), task("z", ["q"], "change")];
    const h = harness(tasks, 2);
    await flush();
    expect(h.started).toEqual(["a", "q"]);
    const { states } = await h.drive();
    expect(stateList(states)).toEqual({ a: "done", p: "primary", q: "done", z: "primary" });
    expect(h.started).toEqual(["a", "q"]);
    expect(h.changes.slice(0, 2).map(([id, s]) => [id, s])).toEqual([
      ["p", "primary"],
      ["z", "primary"],
    ]);
  });

  it("returns at once for an empty plan, and skips tasks that can never start", async () => {
    expect(
      (await runDag([], { concurrency: 2, runTask: async () => "done", isPrimaryTask: () => false })).states
        .size,
    ).toBe(0);
    const h = harness([task("a", ["ghost"]), task("b", ["c"]), task("c", ["b"]), task("d")], 2);
    const { states } = await h.drive();
    expect(stateList(states)).toEqual({ a: "skipped", b: "skipped", c: "skipped", d: "done" });
  });

  it("refuses duplicate ids and clamps the concurrency", () => {
    const run = () =>
      runDag([task("a"), task("a")], {
        concurrency: 2,
        runTask: async () => "done",
        isPrimaryTask: () => false,
      });
    expect(run).toThrow(/duplicate task id in plan: a/);
    expect([0, -1, 1, 2.7, 3, 9, Number.NaN].map(clampConcurrency)).toEqual([1, 1, 1, 2, 3, 3, 2]);
  });

  it("re-throws an onChange failure once every task ended", async () => {
    let calls = 0;
    const result = runDag([task("a"), task("b")], {
      concurrency: 1,
      isPrimaryTask: () => false,
      runTask: async () => {
        calls += 1;
        return "done";
      },
      onChange: (id, state) => {
        if (id === "a" && state === "done") throw new Error("recorder broke");
      },
    });
    await expect(result).rejects.toThrow("recorder broke");
    expect(calls).toBe(2);
  });

  it("counts its own bookkeeping as overhead, not the time inside runTask", async () => {
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {}
    };
    let inside = 0;
    const { overheadMs, wallMs } = await runDag(TWELVE.slice(0, 4), {
      concurrency: 2,
      isPrimaryTask: () => false,
      runTask: async () => {
        const began = performance.now();
        busy(15);
        inside += performance.now() - began;
        return "done";
      },
    });
    expect(wallMs).toBeGreaterThanOrEqual(60);
    expect(overheadMs).toBeGreaterThanOrEqual(0);
    // Overhead is time outside runTask however slow a busy host makes either (no fixed bound): counting the
    // 60 ms inside the tasks would exceed it. The 1 ms is the clock's reading in two places.
    expect(overheadMs).toBeLessThanOrEqual(wallMs - inside + 1);
  });
});
