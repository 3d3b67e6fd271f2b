// For usage tests: orchestrated session states with given turns (their sums made as the engine makes them) and
// real session records holding them, started when the test says.
import { type AutoState, initialAutoState, type Usage } from "./auto-state.js";
import { openSessionStore } from "./store.js";

export const usage = (input: number, cached: number, output: number, cost: number | null): Usage => ({
  input_tokens: input,
  cached_input_tokens: cached,
  output_tokens: output,
  cost_usd: cost,
});

export type Turn = AutoState["turns"][number];
export const turn = (executor: Turn["executor"], used: Usage | null, taskId: string | null = null): Turn => ({
  at: "2026-12-01T00:00:00.000Z",
  kind: taskId ? "worker" : "answer",
  task_id: taskId,
  executor,
  model: null,
  status: "completed",
  duration_ms: 1000,
  usage: used,
});

/** An orchestrated session's state with these turns, its sums made as the engine makes them. */
export function stateWith(turns: Turn[], totalTurns = turns.length): AutoState {
  const state = initialAutoState("codex", 2);
  state.turns = turns;
  const byExecutor: AutoState["usage_by_executor"] = {};
  for (const entry of turns) {
    if (!entry.usage) continue;
    const before = byExecutor[entry.executor];
    byExecutor[entry.executor] = {
      input_tokens: (before?.input_tokens ?? 0) + entry.usage.input_tokens,
      cached_input_tokens: (before?.cached_input_tokens ?? 0) + entry.usage.cached_input_tokens,
      output_tokens: (before?.output_tokens ?? 0) + entry.usage.output_tokens,
      cost_usd:
        before?.cost_usd == null && entry.usage.cost_usd === null
          ? null
          : (before?.cost_usd ?? 0) + (entry.usage.cost_usd ?? 0),
      turns: (before?.turns ?? 0) + 1,
      unpriced_turns:
        (before?.unpriced_turns ?? 0) +
        (entry.usage.cost_usd === null && entry.usage.input_tokens + entry.usage.output_tokens > 0 ? 1 : 0),
    };
  }
  state.usage_by_executor = byExecutor;
  const all = Object.values(byExecutor).filter((u) => u !== undefined);
  const sum = (pick: (u: Usage) => number) => all.reduce((total, u) => total + pick(u), 0);
  const costs = all.flatMap((u) => (u.cost_usd === null ? [] : [u.cost_usd]));
  state.usage = {
    input_tokens: sum((u) => u.input_tokens),
    cached_input_tokens: sum((u) => u.cached_input_tokens),
    output_tokens: sum((u) => u.output_tokens),
    cost_usd: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
    turns: totalTurns,
    unpriced_turns: all.reduce((total, u) => total + (u.unpriced_turns ?? 0), 0),
  };
  return state;
}

/** A real session record started at `startedAt` (orchestrated with `auto`, or a direct one without). */
export async function writeSession(dir: string, startedAt: string, auto?: AutoState): Promise<string> {
  const store = openSessionStore(dir);
  const created = await store.create({
    agent: "codex",
    mode: auto ? "orchestrated" : "direct",
    status: "exited",
    pid: null,
    pid_start_ticks: null,
    project: "host:test",
    knowledge_sources: [],
    compression: { requested: "direct", effective: "direct", reason: "test" },
  });
  await store.update(created.id, { started_at: startedAt, ...(auto ? { auto } : {}) });
  return created.id;
}
