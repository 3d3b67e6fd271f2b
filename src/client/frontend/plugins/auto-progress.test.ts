import { describe, expect, it } from "vitest";
import type { AutoEvent, AutoEventBody, Progress } from "../../auto/events.js";
import { createAutoProgress, MAX_RUNNING_SHOWN, MAX_SOURCES_SHOWN } from "./auto-progress.js";

let seq = 0;
function event(session: string, body: AutoEventBody): AutoEvent {
  seq += 1;
  return { v: 1, seq, at: "2026-12-03T20:00:00.000Z", session, ...body } as AutoEvent;
}

const progress = (done: number, total: number, running: string[], elapsed_ms: number): Progress => ({
  done,
  total,
  running,
  elapsed_ms,
});

function taskEvent(
  type: "task.started" | "task.done" | "task.cancelled",
  id: string,
  executor: string,
  model: string,
  at: Progress,
): AutoEventBody {
  return {
    type,
    task_id: id,
    kind: "research",
    origin: "plan",
    executor,
    model,
    effort: "low",
    profile_origin: "scores",
    duration_ms: null,
    usage: null,
    reason: null,
    progress: at,
  };
}

const usage = (input: number, output: number, cost: number | null) => ({
  input_tokens: input,
  cached_input_tokens: 0,
  output_tokens: output,
  cost_usd: cost,
});

function clock(start = 1_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("createAutoProgress", () => {
  it("is null before any session", () => {
    expect(createAutoProgress(clock()).snapshot()).toBeNull();
  });

  it("follows a plan: n of m, the running tasks with their profiles, elapsed going on between events", () => {
    const time = clock();
    const tracker = createAutoProgress(time);
    tracker.observe(
      event("ses_a", {
        type: "session.started",
        planner: "codex",
        primary: "codex",
        workers: 2,
        resumed_from: null,
      }),
    );
    tracker.observe(
      event("ses_a", { type: "plan", tasks: 3, on_workers: 3, in_primary: 0, attempts: 1, repaired: false }),
    );
    expect(tracker.snapshot()).toMatchObject({ session_id: "ses_a", active: true, done: 0, total: 3 });
    tracker.observe(
      event("ses_a", taskEvent("task.started", "t1", "codex", "gpt-mini", progress(0, 3, ["t1"], 500))),
    );
    tracker.observe(
      event("ses_a", taskEvent("task.started", "t2", "claude", "sonnet", progress(0, 3, ["t1", "t2"], 700))),
    );
    tracker.observe(
      event("ses_a", { type: "phase", phase: "running", progress: progress(0, 3, ["t1", "t2"], 800) }),
    );
    time.advance(2_000);
    expect(tracker.snapshot()).toMatchObject({
      phase: "running",
      done: 0,
      total: 3,
      running: [
        { id: "t1", executor: "codex", model: "gpt-mini" },
        { id: "t2", executor: "claude", model: "sonnet" },
      ],
      running_count: 2,
      elapsed_ms: 2_800,
    });
    tracker.observe(
      event("ses_a", taskEvent("task.done", "t1", "codex", "gpt-mini", progress(1, 3, ["t2"], 3_000))),
    );
    expect(tracker.snapshot()).toMatchObject({
      done: 1,
      completed: 1,
      running: [{ id: "t2" }],
      elapsed_ms: 3_000,
    });
    // A stopped plan's cancelled task ends it but was not done.
    tracker.observe(
      event("ses_a", taskEvent("task.cancelled", "t2", "claude", "sonnet", progress(2, 3, [], 3_100))),
    );
    expect(tracker.snapshot()).toMatchObject({ done: 2, completed: 1, running: [] });
  });

  it("sums turn tokens and counts failovers while running, then keeps the ended session's own figures", () => {
    const time = clock();
    const tracker = createAutoProgress(time);
    const turn = (input: number, output: number, cost: number | null): AutoEventBody => ({
      type: "turn",
      kind: "worker",
      task_id: "t1",
      executor: "claude",
      model: null,
      status: "ok",
      duration_ms: 10,
      usage: usage(input, output, cost),
    });
    tracker.observe(event("ses_b", turn(100, 10, null)));
    tracker.observe(event("ses_b", turn(50, 5, 0.25)));
    tracker.observe(
      event("ses_b", {
        type: "failover",
        scope: "task",
        task_id: "t1",
        from: "codex",
        to: "claude",
        reason: "usage limit",
        handoff_ms: 5,
        limit_kind: "usage_limit",
        resets_at: null,
        to_model: null,
        joined: [],
      }),
    );
    expect(tracker.snapshot()).toMatchObject({
      failovers: 1,
      tokens: { input: 150, output: 15, cost_usd: 0.25 },
    });
    tracker.observe(
      event("ses_b", {
        type: "session.ended",
        phase: "failed",
        exit_code: 1,
        error: `x${"y".repeat(400)}`,
        usage: { ...usage(1_000, 20, 0.5), turns: 3, unpriced_turns: 0 },
        progress: progress(2, 3, [], 9_000),
      }),
    );
    time.advance(60_000);
    const ended = tracker.snapshot();
    expect(ended).toMatchObject({
      active: false,
      phase: "failed",
      exit_code: 1,
      elapsed_ms: 9_000,
      done: 2,
      running: [],
      tokens: { input: 1_000, output: 20, cost_usd: 0.5 },
    });
    expect(ended?.error?.length).toBe(160);
  });

  it("shows the running session before one that ended, and the last started when none runs", () => {
    const tracker = createAutoProgress(clock());
    const end = (phase: "done" | "stopped"): AutoEventBody => ({
      type: "session.ended",
      phase,
      exit_code: phase === "done" ? 0 : 130,
      error: null,
      usage: { ...usage(0, 0, null), turns: 0, unpriced_turns: 0 },
      progress: progress(0, 0, [], 1),
    });
    tracker.observe(event("ses_1", { type: "phase", phase: "planning", progress: progress(0, 0, [], 1) }));
    tracker.observe(event("ses_2", { type: "phase", phase: "planning", progress: progress(0, 0, [], 1) }));
    tracker.observe(event("ses_2", end("done")));
    expect(tracker.snapshot()?.session_id).toBe("ses_1");
    tracker.observe(event("ses_1", end("stopped")));
    expect(tracker.snapshot()).toMatchObject({ session_id: "ses_2", phase: "done" });
  });

  it("stays bounded: running tasks, sources and their reasons are cut, old sessions forgotten", () => {
    const tracker = createAutoProgress(clock());
    const ids = Array.from({ length: 30 }, (_, index) => `t${index}`);
    tracker.observe(event("ses_big", { type: "phase", phase: "running", progress: progress(0, 30, ids, 1) }));
    const many = Array.from({ length: 64 }, (_, index) => `source-${index}-${"a".repeat(120)}`);
    tracker.observe(
      event("ses_big", {
        type: "sources",
        configured: many,
        selected: many,
        excluded: many.map((alias) => ({ alias, reason: "r".repeat(300) })),
        failed: many.map((alias) => ({ alias, reason: "r".repeat(300) })),
      }),
    );
    const snapshot = tracker.snapshot();
    expect(snapshot?.running).toHaveLength(MAX_RUNNING_SHOWN);
    expect(snapshot?.running_count).toBe(30);
    expect(snapshot?.sources?.configured).toHaveLength(MAX_SOURCES_SHOWN);
    expect(snapshot?.sources?.failed[0]?.reason.length).toBe(160);
    expect(snapshot?.sources?.excluded[0]?.alias.length).toBe(80);
    expect(JSON.stringify(snapshot).length).toBeLessThan(16 * 1024);
    for (let index = 0; index < 10; index += 1)
      tracker.observe(
        event(`ses_${index}`, { type: "phase", phase: "planning", progress: progress(0, 0, [], 1) }),
      );
    // Only the last four are remembered: once they ended, no older running session is shown.
    for (let index = 6; index < 10; index += 1)
      tracker.observe(
        event(`ses_${index}`, {
          type: "session.ended",
          phase: "done",
          exit_code: 0,
          error: null,
          usage: { ...usage(0, 0, null), turns: 0, unpriced_turns: 0 },
          progress: progress(0, 0, [], 1),
        }),
      );
    expect(tracker.snapshot()).toMatchObject({ session_id: "ses_9", active: false });
  });
});
