import { describe, expect, it } from "vitest";
import { type AutoState, type AutoTask, initialAutoState } from "../session/auto-state.js";
import { createEventDiffer, progressOf } from "./events.js";

const task = (id: string, state: AutoTask["state"] = "pending"): AutoTask => ({
  id,
  kind: "research",
  origin: "plan",
  depends_on: [],
  signals: { complexity: 0.5, context_need: 0.5, risk: 0.2, ambiguity: 0.2, est_tokens: 30_000 },
  score: 0.5,
  tier: 2,
  profile: { id: "mdl_1", executor: "codex", model: "m", effort: "low" },
  profile_origin: "scores",
  state,
  reason: null,
  started_at: null,
  ended_at: null,
  duration_ms: null,
  executor_ms: null,
  escalations: [],
  refs: [],
  usage: null,
});

describe("the event differ", () => {
  it("announces the plan once its tasks are decided, then each task's changes in order, nothing twice", () => {
    const state: AutoState = initialAutoState("codex", 2);
    const differ = createEventDiffer(state, performance.now());
    state.plan = { attempts: 1, repaired: false, tasks: 2 };
    expect(differ.next(state)).toEqual([]);
    state.tasks = [task("a"), task("b")];
    state.phase = "running";
    expect(differ.next(state).map((event) => event.type)).toEqual(["plan", "phase"]);
    (state.tasks[0] as AutoTask).state = "running";
    expect(differ.next(state)).toMatchObject([
      {
        type: "task.started",
        task_id: "a",
        executor: "codex",
        progress: { done: 0, total: 2, running: ["a"] },
      },
    ]);
    expect(differ.next(state)).toEqual([]);
    Object.assign(state.tasks[0] as AutoTask, { state: "done", duration_ms: 1200 });
    (state.tasks[1] as AutoTask).escalations.push("failed: weak; tier 3");
    expect(differ.next(state)).toMatchObject([
      { type: "task.done", task_id: "a", duration_ms: 1200, progress: { done: 1 } },
      { type: "task.escalated", task_id: "b", reason: "failed: weak; tier 3" },
    ]);
  });

  it("tells each new turn and failover, and a task joining an earlier failover", () => {
    const state: AutoState = initialAutoState("codex", 2);
    const differ = createEventDiffer(state, performance.now());
    const usage = { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, cost_usd: null };
    const turn = {
      at: "x",
      kind: "plan" as const,
      task_id: null,
      executor: "codex" as const,
      model: null,
      status: "completed",
      duration_ms: 5,
      usage,
    };
    state.turns.push(turn, { ...turn, kind: "worker", task_id: "a" });
    state.usage = { ...usage, turns: 2, unpriced_turns: 0 };
    state.failovers.push({
      at: "y",
      scope: "task",
      task_id: "a",
      from: "codex",
      to: "claude",
      reason: "codex: usage_limit",
      handoff_ms: null,
      limit_kind: "usage_limit",
      resets_at: null,
      to_model: "haiku",
      joined: [],
    });
    expect(differ.next(state).map((event) => [event.type, "kind" in event ? event.kind : null])).toEqual([
      ["turn", "plan"],
      ["turn", "worker"],
      ["failover", null],
    ]);
    state.failovers[0]?.joined.push("b");
    expect(differ.next(state)).toMatchObject([{ type: "failover", joined: ["b"] }]);
    // 64 turns are kept; the count says how many are new even when older ones were dropped.
    state.turns.splice(0, 1);
    state.turns.push({ ...turn, kind: "consolidate" });
    state.usage = { ...usage, turns: 3, unpriced_turns: 0 };
    expect(differ.next(state)).toMatchObject([{ type: "turn", kind: "consolidate" }]);
  });
});

describe("progressOf", () => {
  it("times the session from its start on the monotonic clock the event stream is given", () => {
    const state = initialAutoState("codex", 2);
    const { elapsed_ms } = progressOf(state, performance.now() - 1_500);
    expect(elapsed_ms).toBeGreaterThanOrEqual(1_500);
    // Generous for a busy host, far below a wall-clock epoch mixed with a monotonic one.
    expect(elapsed_ms).toBeLessThan(600_000);
  });
});
